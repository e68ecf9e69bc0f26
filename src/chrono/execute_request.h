#ifndef AEVATAR_CHRONO_EXECUTE_REQUEST_H_
#define AEVATAR_CHRONO_EXECUTE_REQUEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sandbox/run_spec.h"

namespace aevatar::chrono {

inline constexpr int kDefaultTimeoutSecs = 180;

// The body of POST /execute and POST /executions:
//   {language, script, stdin?, env?, timeout_secs?}
struct ExecuteRequest {
  sandbox::Language language = sandbox::Language::kPython;
  std::string script;
  std::string stdin_data;
  std::vector<sandbox::EnvVar> env;  // sorted by name
  int timeout_secs = kDefaultTimeoutSecs;
};

// Parses and validates a request body. Each problem has its own typed code
// (400): MALFORMED_JSON, INVALID_REQUEST (not an object), INVALID_FIELD_TYPE,
// LANGUAGE_MISSING, UNSUPPORTED_LANGUAGE, SCRIPT_MISSING, INVALID_TIMEOUT,
// INVALID_ENV. Messages name fields, never echo their values.
absl::StatusOr<ExecuteRequest> ParseExecuteRequest(std::string_view body);

// The canonical JSON of a request (sorted keys, defaults filled in), so that
// equal requests have equal text. Holds the source: never log it.
std::string CanonicalRequestJson(const ExecuteRequest& request);
absl::StatusOr<ExecuteRequest> ParseCanonicalRequest(std::string_view canonical);

// The sandbox run for `request`, with the engine's other defaults.
sandbox::RunSpec ToRunSpec(const ExecuteRequest& request);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_EXECUTE_REQUEST_H_
