#ifndef AEVATAR_AEVATAR_CODEX_MANAGED_ERRORS_H_
#define AEVATAR_AEVATAR_CODEX_MANAGED_ERRORS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aevatar/clients/nyxid_client.h"
#include "nlohmann/json.hpp"

// The typed errors of managed codex_exec (spec: codex-exec-workflow-sample.md
// "Diagnose by boundary") and the one reading of chrono-sandbox's terminal
// reply to POST /codex/execute. Every failure of a managed call is exactly one
// of these codes; each reaches the caller with a sanitized diagnostic id.
namespace aevatar::orchestrator {

inline constexpr char kTargetNotConfigured[] = "target_not_configured";
inline constexpr char kManagedTargetDisabled[] = "managed_target_disabled";
inline constexpr char kManagedFeatureNotEnabled[] = "managed_feature_not_enabled";
inline constexpr char kManagedUserServicesUnavailable[] = "managed_user_services_unavailable";
inline constexpr char kManagedCredentialUnavailable[] = "managed_credential_unavailable";
inline constexpr char kManagedProxyAuthorizationDenied[] = "managed_proxy_authorization_denied";
inline constexpr char kManagedProxyTargetUnavailable[] = "managed_proxy_target_unavailable";
inline constexpr char kManagedProxyTimeout[] = "managed_proxy_timeout";
inline constexpr char kManagedProxyUnavailable[] = "managed_proxy_unavailable";
inline constexpr char kManagedResponseInvalid[] = "managed_response_invalid";
inline constexpr char kManagedResponseTooLarge[] = "managed_response_too_large";
inline constexpr char kManagedExecutionNonzeroExit[] = "managed_execution_nonzero_exit";
// Not one of the spec's codes: the caller cancelled the call (an MCP
// notifications/cancelled, a stopped workflow run) and chrono-sandbox killed
// the run (its status "cancelled"), or the cancel came before it was sent.
inline constexpr char kManagedExecutionCancelled[] = "managed_execution_cancelled";
// Not one of the spec's codes and never an API answer: ManagedCodex::Execute
// returns it only when a caller-supplied budget shorter than the deadline
// chain (a workflow step's remaining timeout_ms) ended the exchange; the
// workflow step reports it as its own codex_exec_step_timeout.
inline constexpr char kManagedBudgetExhausted[] = "managed_budget_exhausted";

// chrono-sandbox's bounds on its terminal reply (contract §1): the whole
// body < 128 KiB, `output` at most 64 KiB.
inline constexpr size_t kMaxManagedResponseBytes = 128 * 1024;
inline constexpr size_t kMaxManagedOutputBytes = 64 * 1024;

// Returns the typed error `code` (one of the above) with its HTTP status:
// target_not_configured 501, managed_target_disabled 409,
// managed_feature_not_enabled 403, managed_user_services_unavailable 409,
// managed_credential_unavailable 409, managed_proxy_authorization_denied 403,
// managed_proxy_target_unavailable 502, managed_proxy_timeout 504,
// managed_proxy_unavailable 503, managed_response_invalid 502,
// managed_response_too_large 502, managed_execution_nonzero_exit 422,
// managed_execution_cancelled 409.
// `detail` must hold no secret, prompt, output or route id.
absl::Status ManagedError(std::string_view code, std::string detail);

// chrono-sandbox's terminal result:
// {status, target, output, exit_code, diagnostic_id, elapsed_ms?}.
struct ManagedCodexResult {
  std::string status;  // "succeeded" | "failed" | "timed_out" | "cancelled"
  std::string target;  // "managed_sandbox"
  std::string output;
  int64_t exit_code = 0;
  std::string diagnostic_id;  // the runner's, "diag_" + [A-Za-z0-9_-]
  std::optional<int64_t> elapsed_ms;

  nlohmann::json ToJson() const;
};

// Reads a 200 reply body with the typed, non-throwing accessors. Errors:
// managed_response_too_large (body >= 128 KiB or output > 64 KiB),
// managed_response_invalid (not an object, a member missing or of another
// type, an unknown status, a target other than managed_sandbox, a
// diagnostic id that is not a plain "diag_" token, or "succeeded" with a
// non-zero exit). The detail names the field, never its value.
absl::StatusOr<ManagedCodexResult> ParseManagedCodexResult(std::string_view body);

// Maps NyxID's answer to the proxied POST /codex/execute to the result or to
// exactly one typed error:
//   transport DeadlineExceeded, HTTP 504/408      -> managed_proxy_timeout
//   transport ResourceExhausted (body over bound)  -> managed_response_too_large
//   any other transport failure, 429, 502, 503, other 5xx -> managed_proxy_unavailable
//   401, 403                                       -> managed_proxy_authorization_denied
//   404, 405, 410, 501, other 4xx                  -> managed_proxy_target_unavailable
//   200                                            -> ParseManagedCodexResult
//   any other status                               -> managed_response_invalid
// A result whose status is not "succeeded" is returned as a result (the
// workflow step keeps its fields); ManagedOutcome turns it into the error.
absl::StatusOr<ManagedCodexResult> ClassifyManagedReply(const NyxidReply& reply);

// OK for a succeeded result; managed_execution_cancelled for a cancelled
// one; managed_execution_nonzero_exit otherwise.
absl::Status ManagedOutcome(const ManagedCodexResult& result);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_MANAGED_ERRORS_H_
