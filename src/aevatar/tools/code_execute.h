#ifndef AEVATAR_AEVATAR_TOOLS_CODE_EXECUTE_H_
#define AEVATAR_AEVATAR_TOOLS_CODE_EXECUTE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/clients/nyxid_client.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

class AdmissionCache;

inline constexpr int kDefaultTimeoutSecs = 180;

// The code_execute tool's arguments:
// {language, source, runtime?, timeout_secs?, stdin?, env?}.
struct CodeExecuteArgs {
  std::string language;
  std::string source;
  std::string runtime;  // a runtime environment's name; "": the language's default
  int timeout_secs = kDefaultTimeoutSecs;
  std::string stdin_data;
  std::map<std::string, std::string> env;
};

// Validates the arguments before any network call. Typed 400 codes:
// MALFORMED_JSON, INVALID_REQUEST, INVALID_FIELD_TYPE, UNSUPPORTED_LANGUAGE,
// SOURCE_MISSING, INVALID_TIMEOUT, INVALID_ENV, UNKNOWN_RUNTIME (empty or not
// a runtime name). Whether the runtime exists for the language is the
// executor's check: its typed 400 (UNKNOWN_RUNTIME,
// RUNTIME_LANGUAGE_MISMATCH) comes back through UpstreamError. Messages never
// echo values.
absl::StatusOr<CodeExecuteArgs> ParseCodeExecuteArgs(std::string_view body);

// The executor's request body for `args` (field `script` carries the source).
nlohmann::json ExecutorRequestBody(const CodeExecuteArgs& args);

// The interactive code_execute path: admit the exact route (converging it
// first for a human caller), then one synchronous POST /execute through the
// NyxID proxy with _nyxid_via = the admitted id. Never retried, except once
// after NyxID refused a reused admission before forwarding anything: with
// `admissions`, the credential's last admission is reused while NyxID
// confirms its facts still hold (admission_cache.h). Returns
// {stdout, stderr, exit_code, verdict, execution_time_ms, timed_out, success,
//  stdout_truncated, stderr_truncated, diagnostic_id}, or a typed error.
absl::StatusOr<nlohmann::json> ExecuteInteractive(const NyxidClient& nyxid, const Caller& caller,
                                                  const CodeExecuteArgs& args,
                                                  const std::string& chrono_catalog_id,
                                                  const std::string& diagnostic_id,
                                                  AdmissionCache* admissions = nullptr);

// The tool's answer for the executor's reply to POST /execute: a 200 is read
// with ParseExecutionResult (a body that breaks the contract is 502
// code_execution_response_invalid, logged under `diagnostic_id` with the
// field it names); any other status is UpstreamError(reply).
absl::StatusOr<nlohmann::json> InteractiveResult(const NyxidReply& reply,
                                                 const std::string& diagnostic_id);

// Maps an unsuccessful executor/proxy reply to a typed error that keeps the
// upstream status and code (429 QUEUE_FULL stays 429, a proxy 504 stays 504).
absl::Status UpstreamError(const NyxidReply& reply);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_TOOLS_CODE_EXECUTE_H_
