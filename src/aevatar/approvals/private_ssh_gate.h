#ifndef AEVATAR_AEVATAR_APPROVALS_PRIVATE_SSH_GATE_H_
#define AEVATAR_AEVATAR_APPROVALS_PRIVATE_SSH_GATE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/codex/codex_exec_args.h"
#include "nlohmann/json.hpp"

// Every private_ssh codex_exec call runs only after its owner approved that
// exact call (spec: sandbox-execution.md). The first request creates a
// pending approval and is answered at once; nothing waits on the server.
// The caller repeats the request with the approval's id once a person has
// decided; only an approved approval of the identical call lets it run.
namespace aevatar::orchestrator {

// How long a person has to decide.
inline constexpr int64_t kPrivateSshApprovalTtlMs = 15 * 60 * 1000;
// Pending approvals one owner may have at once (so a flood cannot bury the
// real ones): past it, 429 APPROVALS_PENDING_LIMIT.
inline constexpr int64_t kMaxPendingApprovals = 20;

// The call an approval shows and binds, every default filled in:
// {"target": {"kind": "private_ssh", "private_ssh": {"service", "principal"}},
//  "prompt", "timeout_secs"}.
nlohmann::json PrivateSshCall(const CodexExecArgs& args);

struct PrivateSshGate {
  bool approved = false;  // false: the approval is pending
  Approval approval;
};

// Without `approval_id`: stores a new pending approval of this call for
// `owner` and returns it (approved = false). With it: the owner's approval
// must hold this very call (compared with the sealed call, not the stored
// digest); an approved one is consumed here, so it allows one run.
// Errors (base::ApiError): 404 APPROVAL_NOT_FOUND, 409
// APPROVAL_CALL_MISMATCH (another call), 409 APPROVAL_ALREADY_USED, 403
// APPROVAL_DENIED, 410 APPROVAL_EXPIRED, 429 APPROVALS_PENDING_LIMIT.
absl::StatusOr<PrivateSshGate> GatePrivateSsh(ApprovalStore& store, const std::string& owner,
                                              const CodexExecArgs& args,
                                              const std::string& approval_id, int64_t now_ms);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_APPROVALS_PRIVATE_SSH_GATE_H_
