#ifndef AEVATAR_HTTP_PROBLEM_H_
#define AEVATAR_HTTP_PROBLEM_H_

#include <string>

#include "absl/status/status.h"
#include "http/message.h"

namespace aevatar::http {

// Renders an error as application/problem+json (RFC 9457):
//   {"type": "https://aevatar.dev/problems/<code-lowercase>", "title": …,
//    "status": <http status>, "detail": status.message(), "code": <ApiCode>,
//    "diagnostic_id": diagnostic_id}
// The HTTP status comes from base::HttpStatusFor (the one mapping).
Response ProblemResponse(const absl::Status& status, const std::string& diagnostic_id);

// Returns a fresh diagnostic id ("diag_" + 16 random hex digits) to correlate
// an error body with the log line that describes it.
std::string NewDiagnosticId();

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_PROBLEM_H_
