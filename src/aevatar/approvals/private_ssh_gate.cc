#include "aevatar/approvals/private_ssh_gate.h"

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {

nlohmann::json PrivateSshCall(const CodexExecArgs& args) {
  return {{"target",
           {{"kind", "private_ssh"},
            {"private_ssh", {{"service", args.ssh_service}, {"principal", args.ssh_principal}}}}},
          {"prompt", args.prompt},
          {"timeout_secs", args.timeout_secs}};
}

absl::StatusOr<PrivateSshGate> GatePrivateSsh(ApprovalStore& store, const std::string& owner,
                                              const CodexExecArgs& args,
                                              const std::string& approval_id, int64_t now_ms) {
  const nlohmann::json call = PrivateSshCall(args);
  // An empty owner would count every owner's approvals (CountPending's "").
  if (owner.empty()) return absl::InternalError("an approval needs its owner");
  if (approval_id.empty()) {
    auto pending = store.CountPending(owner, now_ms);
    if (!pending.ok()) return pending.status();
    if (*pending >= kMaxPendingApprovals) {
      return base::ApiError(absl::StatusCode::kResourceExhausted, "APPROVALS_PENDING_LIMIT",
                            "too many approvals wait for a decision; decide or let them expire",
                            429);
    }
    PrivateSshGate gate;
    gate.approval.id = base::RandomId("appr_");
    gate.approval.owner = owner;
    gate.approval.tool = "codex_exec";
    gate.approval.call = call;
    gate.approval.call_digest = ApprovalCallDigest(call);
    gate.approval.created_at_ms = now_ms;
    gate.approval.expires_at_ms = now_ms + kPrivateSshApprovalTtlMs;
    if (absl::Status st = store.Create(gate.approval); !st.ok()) return st;
    return gate;
  }
  auto found = store.Get(owner, approval_id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) {
    return base::ApiError(absl::StatusCode::kNotFound, "APPROVAL_NOT_FOUND",
                          "no such approval for this user", 404);
  }
  PrivateSshGate gate{false, **std::move(found)};
  if (gate.approval.call != call) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "APPROVAL_CALL_MISMATCH",
                          "the approval is for another call; an approval holds one exact call",
                          409);
  }
  switch (EffectiveState(gate.approval, now_ms)) {
    case ApprovalState::kApproved: {
      auto consumed = store.Consume(owner, approval_id);
      if (!consumed.ok()) return consumed.status();
      if (!*consumed) break;  // another request used it first
      gate.approved = true;
      gate.approval.state = ApprovalState::kUsed;
      return gate;
    }
    case ApprovalState::kUsed:
      break;
    case ApprovalState::kPending:
      return gate;
    case ApprovalState::kDenied:
      return base::ApiError(absl::StatusCode::kPermissionDenied, "APPROVAL_DENIED",
                            "the owner denied this call", 403);
    case ApprovalState::kExpired:
      return base::ApiError(absl::StatusCode::kFailedPrecondition, "APPROVAL_EXPIRED",
                            "the approval expired before it was decided", 410);
  }
  return base::ApiError(absl::StatusCode::kFailedPrecondition, "APPROVAL_ALREADY_USED",
                        "the approval allowed one run, which has started; ask again", 409);
}

}  // namespace aevatar::orchestrator
