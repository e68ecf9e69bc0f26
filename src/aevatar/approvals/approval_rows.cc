#include "aevatar/approvals/approval_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "aevatar/vault/sealed_json.h"
#include "base/api_error.h"

namespace aevatar::orchestrator {

std::string SealApprovalCall(const VaultKeyring& vault, const Approval& approval) {
  return SealJson(
      vault,
      nlohmann::json{{"owner", approval.owner}, {"id", approval.id}, {"call", approval.call}});
}

absl::StatusOr<Approval> ApprovalFromRow(const VaultKeyring& vault, ApprovalRow row) {
  Approval approval;
  approval.id = std::move(row.id);
  approval.owner = std::move(row.owner);
  approval.tool = std::move(row.tool);
  approval.call_digest = std::move(row.call_digest);
  approval.created_at_ms = row.created_at_ms;
  approval.expires_at_ms = row.expires_at_ms;
  approval.decided_at_ms = row.decided_at_ms;
  const auto state = ParseApprovalState(row.state);
  auto sealed = OpenSealedJson(vault, row.sealed_call, "approval call",
                               {{"owner", approval.owner}, {"id", approval.id}});
  if (!sealed.ok()) return sealed.status();
  if (!state || !sealed->contains("call")) {
    return absl::DataLossError("a stored approval is corrupt");
  }
  approval.state = *state;
  approval.call = (*sealed)["call"];
  return approval;
}

absl::Status ApprovalNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "APPROVAL_NOT_FOUND",
                        "no such approval for this user", 404);
}

absl::Status DecideRefusal(const Approval& current) {
  if (current.state == ApprovalState::kPending) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "APPROVAL_EXPIRED",
                          "the approval expired before it was decided", 410);
  }
  return base::ApiError(
      absl::StatusCode::kFailedPrecondition, "APPROVAL_ALREADY_DECIDED",
      absl::StrCat("the approval is already ", std::string(ApprovalStateName(current.state))), 409);
}

}  // namespace aevatar::orchestrator
