#ifndef AEVATAR_CHRONO_EXECUTE_REQUEST_H_
#define AEVATAR_CHRONO_EXECUTE_REQUEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sandbox/run_spec.h"
#include "sandbox/runtime_env.h"

namespace aevatar::chrono {

inline constexpr int kDefaultTimeoutSecs = 180;

// The body of POST /execute and POST /executions:
//   {language, script, runtime?, stdin?, env?, timeout_secs?}
struct ExecuteRequest {
  sandbox::Language language = sandbox::Language::kPython;
  std::string runtime;  // a declared runtime environment's name; "": the language's default
  std::string script;
  std::string stdin_data;
  std::vector<sandbox::EnvVar> env;  // sorted by name
  int timeout_secs = kDefaultTimeoutSecs;
};

// Parses and validates a request body; `runtime` must name one of
// `runtimes` declared for the request's language. Each problem has its own
// typed code (400): MALFORMED_JSON, INVALID_REQUEST (not an object),
// INVALID_FIELD_TYPE, LANGUAGE_MISSING, UNSUPPORTED_LANGUAGE, SCRIPT_MISSING,
// INVALID_TIMEOUT, INVALID_ENV, UNKNOWN_RUNTIME, RUNTIME_LANGUAGE_MISMATCH.
// Messages name fields, never echo their values.
absl::StatusOr<ExecuteRequest> ParseExecuteRequest(
    std::string_view body, const std::vector<sandbox::RuntimeEnv>& runtimes = {});

// The canonical JSON of a request (sorted keys, defaults filled in; `runtime`
// only when one is chosen, so requests without one keep their old text), so
// that equal requests have equal text. Holds the source: never log it.
std::string CanonicalRequestJson(const ExecuteRequest& request);
// Parses a stored canonical request. Its runtime is not checked here: the
// engine refuses one that is no longer declared when the run starts.
absl::StatusOr<ExecuteRequest> ParseCanonicalRequest(std::string_view canonical);

// The sandbox run for `request`, with the engine's other defaults.
sandbox::RunSpec ToRunSpec(const ExecuteRequest& request);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_EXECUTE_REQUEST_H_
