#ifndef AEVATAR_AEVATAR_APPROVALS_APPROVAL_STORE_H_
#define AEVATAR_AEVATAR_APPROVALS_APPROVAL_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/approvals/approval.h"
#include "aevatar/vault/vault_keyring.h"

namespace aevatar::orchestrator {

// Where approvals live: committed before each call returns, so a pending
// approval outlives an aevatar restart. Every read and decision is scoped to
// the owner: another user's approval is indistinguishable from none.
// Thread-safe.
class ApprovalStore {
 public:
  virtual ~ApprovalStore() = default;

  // Stores a new pending approval (AlreadyExists for a duplicate id).
  virtual absl::Status Create(const Approval& approval) = 0;

  // The owner's approval `id`, or nullopt.
  virtual absl::StatusOr<std::optional<Approval>> Get(const std::string& owner,
                                                      const std::string& id) = 0;

  // The owner's approvals, newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<Approval>> List(const std::string& owner, int limit) = 0;

  // Decides the owner's pending approval `id` once, at `now_ms`: returns it
  // decided. Errors (base::ApiError): 404 APPROVAL_NOT_FOUND, 409
  // APPROVAL_ALREADY_DECIDED, 410 APPROVAL_EXPIRED (and it is then stored as
  // expired).
  virtual absl::StatusOr<Approval> Decide(const std::string& owner, const std::string& id,
                                          bool approve, int64_t now_ms) = 0;

  // Marks the owner's approved approval `id` used, atomically: true for the
  // one caller that changed it, false when it was not approved (already
  // used, say). The run it allows starts only on true.
  virtual absl::StatusOr<bool> Consume(const std::string& owner, const std::string& id) = 0;

  // The owner's pending, unexpired approvals; every owner's when `owner` is
  // "" (the operators' gauge, aevatar_approvals_pending).
  virtual absl::StatusOr<int64_t> CountPending(const std::string& owner, int64_t now_ms) = 0;
};

// A store in the SQLite file at `path` (":memory:" for tests); each call is
// sealed with `vault` (required; shared with the key rotation) together with
// its owner and id, so a sealed call moved to another row does not open
// (DataLoss).
absl::StatusOr<std::unique_ptr<ApprovalStore>> OpenSqliteApprovalStore(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_APPROVALS_APPROVAL_STORE_H_
