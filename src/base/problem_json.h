#ifndef AEVATAR_BASE_PROBLEM_JSON_H_
#define AEVATAR_BASE_PROBLEM_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// Reading an application/problem+json body (RFC 9457) that another service
// sent: the typed error of a NyxID, executor or aevatar reply. The writer is
// http::ProblemResponse; this is its one reader, for services and CLIs alike.
//
// Every field is what the peer claims, so each is kept only when it has the
// expected type and shape: a code or diagnostic id that is not a plain token
// is dropped (it could smuggle text into a log line or an outcome), and the
// prose fields are cut to a bounded length with control characters replaced
// (they end up on a terminal). Never throws.
namespace aevatar::base {

inline constexpr size_t kMaxProblemTokenBytes = 64;
inline constexpr size_t kMaxProblemTextBytes = 1024;

struct ProblemDetails {
  int status = 0;             // the body's "status" when it is 100..599, else 0
  std::string code;           // [A-Za-z0-9_]{1,64}, else ""
  std::string title;          // display text, bounded, no control characters
  std::string detail;         // display text, bounded, no control characters
  std::string remediation;    // display text, bounded, no control characters
  std::string diagnostic_id;  // [A-Za-z0-9_-]{1,64}, else ""
};

// Parses `body`. InvalidArgument when it is not a JSON object (then the
// caller only has the HTTP status to go by); any single field of the wrong
// type or shape is left empty instead.
absl::StatusOr<ProblemDetails> ParseProblemJson(std::string_view body);

// The same reading of an already parsed document (e.g. a client's reply body).
absl::StatusOr<ProblemDetails> ProblemFromJson(const nlohmann::json& document);

// The "code" member of `document` when it is a plain token as above, else "".
std::string ProblemCodeOf(const nlohmann::json& document);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_PROBLEM_JSON_H_
