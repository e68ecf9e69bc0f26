#include "http/request_id.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "http/problem.h"

namespace aevatar::http {

bool IsSaneRequestId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

std::string RequestIdOf(const Request& request) {
  std::optional<std::string> given = request.headers.Get("X-Request-Id");
  if (given && IsSaneRequestId(*given)) return *given;
  // A diagnostic id is "diag_" + 16 random hex digits; the same randomness
  // under another prefix keeps the two kinds of id apart at a glance.
  return "req_" + NewDiagnosticId().substr(5);
}

}  // namespace aevatar::http
