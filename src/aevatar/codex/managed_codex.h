#ifndef AEVATAR_AEVATAR_CODEX_MANAGED_CODEX_H_
#define AEVATAR_AEVATAR_CODEX_MANAGED_CODEX_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/codex/codex_exec_args.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/codex/managed_errors.h"
#include "aevatar/codex/managed_policy.h"
#include "nlohmann/json.hpp"

// Managed codex_exec (target managed_sandbox) end to end on aevatar's side:
// the rollout policy, the explicit credential lifecycle and the execution
// client.
//
// Theory of operation.
//  1. Lifecycle (explicit, authenticated, idempotent): POST
//     /api/managed-codex/credential with a human NyxID access token finds
//     the user's exact chrono-sandbox route and makes sure the vault holds a
//     live Agent Key that NyxID restricts to that route (minting a new one,
//     or replacing a revoked or stale one; otherwise nothing changes). GET
//     reports {status, execution_ready, execution_readiness_reason} from a
//     read-only check; status "active" alone is not readiness.
//  2. Execution is credential-read-only: it loads the key from the vault,
//     reads the user's inventory with it, selects the exact chrono-sandbox
//     and chrono-llm-public routes, and sends one
//       POST {nyxid}/api/v1/proxy/{slug}/codex/execute?_nyxid_via={chrono id}
//     with Authorization: Bearer <key>, an Idempotency-Key and the body
//     {prompt, timeout_secs, model_route: {user_service_id: llm id}}. It never
//     provisions, reconciles, rotates or retries the credential.
//  3. Deadlines (spec: 180 s < 300 s < >= 315 s < 330 s < >= 360 s): the
//     Codex run's own timeout_secs (chrono-sandbox) < the managed request
//     deadline (300 s) < NyxID's proxy deadline (>= 315 s, NyxID's) < the
//     NyxID client bound (330 s) < the workflow step (>= 360 s). Every
//     failure is one typed managed_* error (managed_errors.h).
namespace aevatar::orchestrator {

// Named, overridable deadlines (tests scale them down).
struct ManagedDeadlines {
  // The managed request for the default timeout_secs of 180; a run asking
  // for more gets the difference added, so the request always outlives the
  // Codex run by the same margin.
  std::chrono::milliseconds request{std::chrono::seconds(300)};
  // The NyxID client's bound on the one exchange: never below `request`.
  std::chrono::milliseconds client{std::chrono::seconds(330)};

  // The exchange timeout for a run of `timeout_secs`:
  // min(request + max(0, timeout_secs - 180) s, client + the same extension).
  std::chrono::milliseconds ForRun(int timeout_secs) const;
};

struct ManagedCodexConfig {
  ManagedCodexPolicy policy;
  std::string chrono_catalog_id = "chrono-sandbox";
  std::string llm_catalog_id = "chrono-llm-public";
  ManagedDeadlines deadlines;
  // Told the outcome of every Execute: the runner's status ("succeeded",
  // "failed", "timed_out") or the typed error's code; empty: nobody listens
  // (the service feeds /metrics).
  std::function<void(const std::string& outcome)> on_outcome;
};

// Thread-safe.
class ManagedCodex {
 public:
  ManagedCodex(const NyxidClient* nyxid, ManagedCredentialVault* vault, ManagedCodexConfig config,
               std::function<int64_t()> clock);

  const ManagedCodexConfig& config() const { return config_; }

  // POST /api/managed-codex/credential. Requires a HumanBearer caller (NyxID
  // mints Agent Keys for human tokens only: 403
  // MANAGED_CREDENTIAL_HUMAN_TOKEN_REQUIRED otherwise) that the policy
  // admits (managed_target_disabled / managed_feature_not_enabled) and that
  // owns exactly one usable chrono-sandbox route
  // (managed_user_services_unavailable). Idempotent: returns the status
  // document of CredentialStatus plus "action": "created" | "replaced" |
  // "unchanged". The key never appears in the answer or a log.
  absl::StatusOr<nlohmann::json> EnsureCredential(const Caller& caller,
                                                  const std::string& diagnostic_id);

  // GET /api/managed-codex/credential, read-only:
  // {"status": "active" | "missing" | "unavailable" | "disabled" |
  //  "not_eligible", "execution_ready": bool,
  //  "execution_readiness_reason": "ready" | "managed_target_disabled" |
  //  "managed_feature_not_enabled" | "managed_credential_missing" |
  //  "managed_credential_unavailable" | "managed_user_services_unavailable" |
  //  "managed_llm_route_unavailable" | "managed_proxy_unavailable",
  //  "remediation": str (when not ready), "capability_class",
  //  "rollout_boundary", "eligibility_mode"}.
  nlohmann::json CredentialStatus(const std::string& user_id) const;

  // One managed run for `user_id` (a validated managed_sandbox `args`;
  // private_ssh is target_not_configured). `idempotency_key` is sent as
  // Idempotency-Key (a workflow step's stable key re-attaches to the same
  // chrono run after an aevatar restart). `budget`, when set, caps the
  // exchange below the deadlines (a workflow step's remaining timeout_ms).
  // `caller_services` are the allowed_services of the Agent Key that asked
  // (empty: a token or an unrestricted key): NyxID sees only the managed key,
  // so a restricted key must name the chrono-sandbox route the run uses, by
  // id or slug, or the call is 403 AGENT_KEY_SERVICE_NOT_ALLOWED before any
  // proxy request. `cancel` (may be null; must outlive the call), once
  // notified, stops the run: before the proxy request nothing is sent (the
  // result is managed_execution_cancelled); during it POST
  // /codex/runs/{run_id}/cancel goes through the same route and key
  // (managed_cancel.h), chrono kills the sandbox and the result's status is
  // "cancelled". Returns the runner's result of any terminal status, or
  // exactly one typed error; a failure is logged as one line with
  // `diagnostic_id` and the code, never ids, keys or text.
  absl::StatusOr<ManagedCodexResult> Execute(
      const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
      const std::string& diagnostic_id,
      std::optional<std::chrono::milliseconds> budget = std::nullopt,
      const std::vector<std::string>& caller_services = {},
      const absl::Notification* cancel = nullptr) const;

  // A workflow stop of a running step: sends POST /codex/runs/{run_id}/cancel
  // for the run Execute started with `idempotency_key` (same vault key, same
  // routes and caller_services checks as Execute), again for a few seconds
  // while chrono-sandbox answers 404 (not started yet) or 5xx. OK once it
  // is accepted (the run then ends "cancelled"); otherwise the typed error
  // (managed_proxy_target_unavailable for a run chrono-sandbox does not
  // have: finished, or not started). Logged as one line, no ids.
  absl::Status CancelRun(const std::string& user_id, const std::string& idempotency_key,
                         const std::string& diagnostic_id,
                         const std::vector<std::string>& caller_services = {}) const;

 private:
  // The vault key and the exact routes of a managed call for `user_id`.
  struct Target {
    std::string secret;  // the managed Agent Key: never logged
    std::string chrono_slug, chrono_id, llm_id;
  };
  // The policy, vault, inventory and route checks of Execute; each failure
  // one logged typed error.
  absl::StatusOr<Target> Resolve(const std::string& user_id, const std::string& diagnostic_id,
                                 const std::vector<std::string>& caller_services) const;
  NyxidReply SendCancel(const Target& target, const std::string& run_id) const;

  // Execute without reporting its outcome.
  absl::StatusOr<ManagedCodexResult> ExecuteOnce(
      const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
      const std::string& diagnostic_id, std::optional<std::chrono::milliseconds> budget,
      const std::vector<std::string>& caller_services, const absl::Notification* cancel) const;

  const NyxidClient* nyxid_;
  ManagedCredentialVault* vault_;
  ManagedCodexConfig config_;
  std::function<int64_t()> clock_;
};

// The provisioning step of EnsureCredential without the rollout policy,
// shared with unattended workflow triggers (whose runs execute with this
// Vault-backed key): requires a HumanBearer `caller` (403
// MANAGED_CREDENTIAL_HUMAN_TOKEN_REQUIRED) owning exactly one usable
// chrono-sandbox route (managed_user_services_unavailable), and makes sure
// `vault` holds a live Agent Key NyxID restricts to that exact route.
// Returns "created" | "replaced" | "unchanged". Serialized process-wide.
absl::StatusOr<std::string> EnsureVaultAgentKey(const NyxidClient& nyxid,
                                                ManagedCredentialVault& vault, const Caller& caller,
                                                const std::string& chrono_catalog_id,
                                                int64_t now_ms, const std::string& diagnostic_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_MANAGED_CODEX_H_
