#include "aevatar/approvals/approval.h"

#include "base/crypto.h"

namespace aevatar::orchestrator {

std::string_view ApprovalStateName(ApprovalState state) {
  switch (state) {
    case ApprovalState::kPending:
      return "pending";
    case ApprovalState::kApproved:
      return "approved";
    case ApprovalState::kDenied:
      return "denied";
    case ApprovalState::kExpired:
      return "expired";
    case ApprovalState::kUsed:
      return "used";
  }
  return "pending";
}

std::optional<ApprovalState> ParseApprovalState(std::string_view name) {
  for (ApprovalState state :
       {ApprovalState::kPending, ApprovalState::kApproved, ApprovalState::kDenied,
        ApprovalState::kExpired, ApprovalState::kUsed}) {
    if (ApprovalStateName(state) == name) return state;
  }
  return std::nullopt;
}

bool IsApprovalId(std::string_view id) {
  return !id.empty() && id.size() <= 64 &&
         id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
             std::string_view::npos;
}

std::string ApprovalCallDigest(const nlohmann::json& call) {
  return "sha256:" + base::Sha256Hex(call.dump());
}

ApprovalState EffectiveState(const Approval& approval, int64_t now_ms) {
  if (approval.state == ApprovalState::kPending && now_ms >= approval.expires_at_ms) {
    return ApprovalState::kExpired;
  }
  return approval.state;
}

nlohmann::json ApprovalJson(const Approval& approval, int64_t now_ms) {
  nlohmann::json out = {{"id", approval.id},
                        {"tool", approval.tool},
                        {"call", approval.call},
                        {"call_digest", approval.call_digest},
                        {"state", ApprovalStateName(EffectiveState(approval, now_ms))},
                        {"created_at_ms", approval.created_at_ms},
                        {"expires_at_ms", approval.expires_at_ms}};
  if (approval.decided_at_ms > 0) out["decided_at_ms"] = approval.decided_at_ms;
  return out;
}

}  // namespace aevatar::orchestrator
