#ifndef AEVATAR_AEVATAR_APPROVALS_APPROVAL_ROWS_H_
#define AEVATAR_AEVATAR_APPROVALS_APPROVAL_ROWS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aevatar/approvals/approval.h"
#include "aevatar/vault/vault_keyring.h"

// What every ApprovalStore backend (SQLite, PostgreSQL) shares beyond its
// SQL: how a row's call is sealed and opened, how a stored row becomes an
// Approval, and the typed refusals of Decide.
namespace aevatar::orchestrator {

// The columns every backend's SELECT reads, in this order.
inline constexpr char kApprovalColumns[] =
    "id, owner, tool, sealed_call, call_digest, state, created_at_ms, expires_at_ms, "
    "decided_at_ms";

// One stored row, as read (the call still sealed).
struct ApprovalRow {
  std::string id;
  std::string owner;
  std::string tool;
  std::string sealed_call;
  std::string call_digest;
  std::string state;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;
  int64_t decided_at_ms = 0;
};

// Seals `approval`'s call with its owner and id, so a sealed call moved to
// another row does not open.
std::string SealApprovalCall(const VaultKeyring& vault, const Approval& approval);

// The Approval a stored row holds. DataLoss when the sealed call does not
// open (another vault key, another row) or the state is unknown.
absl::StatusOr<Approval> ApprovalFromRow(const VaultKeyring& vault, ApprovalRow row);

// 404 APPROVAL_NOT_FOUND: also what another owner's approval looks like.
absl::Status ApprovalNotFound();

// Why Decide changed nothing for `current` (a row of the caller's that was
// not pending-and-unexpired): 410 APPROVAL_EXPIRED when it is still stored
// pending (the caller then records the expiry), 409 APPROVAL_ALREADY_DECIDED
// otherwise.
absl::Status DecideRefusal(const Approval& current);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_APPROVALS_APPROVAL_ROWS_H_
