#include "http/problem.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "base/api_error.h"
#include "base/log_context.h"
#include "nlohmann/json.hpp"

namespace aevatar::http {
namespace {

// Titles are the standard reason phrases: stable, short, and never derived
// from the (possibly caller-supplied) detail text.
std::string ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 428:
      return "Precondition Required";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status >= 500 ? "Server Error" : "Client Error";
  }
}

// Fills `out` from the kernel CSPRNG. getrandom(2) without flags blocks only
// until the pool is first initialised, which has happened long before any
// service answers requests.
void FillRandom(uint8_t* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = getrandom(out + done, size - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // No safe fallback exists; an id we cannot make random is a bug to stop on.
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Response ProblemResponse(const absl::Status& status, const std::string& diagnostic_id) {
  int http_status = base::HttpStatusFor(status);
  std::string code = base::ApiCode(status);
  nlohmann::json body = {
      {"type", "https://aevatar.dev/problems/" + absl::AsciiStrToLower(code)},
      {"title", ReasonPhrase(http_status)},
      {"status", http_status},
      {"detail", std::string(status.message())},
      {"code", code},
      {"diagnostic_id", diagnostic_id},
  };
  // The request's id (the Router sets it while a request is handled), so a
  // caller can quote it too.
  if (const std::string& request_id = base::CurrentRequestId(); !request_id.empty()) {
    body["request_id"] = request_id;
  }
  Response response;
  response.status = http_status;
  response.headers.Set("Content-Type", "application/problem+json");
  // `replace` keeps a detail with invalid UTF-8 from throwing inside dump().
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

std::string NewDiagnosticId() {
  static constexpr char kHex[] = "0123456789abcdef";
  uint8_t bytes[8];
  FillRandom(bytes, sizeof(bytes));
  std::string id = "diag_";
  for (uint8_t byte : bytes) {
    id.push_back(kHex[byte >> 4]);
    id.push_back(kHex[byte & 0x0F]);
  }
  return id;
}

}  // namespace aevatar::http
