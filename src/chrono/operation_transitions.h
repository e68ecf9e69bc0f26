#ifndef AEVATAR_CHRONO_OPERATION_TRANSITIONS_H_
#define AEVATAR_CHRONO_OPERATION_TRANSITIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chrono/operation.h"

namespace aevatar::chrono {

// The OperationStore contract's rules, written once for every store
// (SQLite, PostgreSQL): each store loads a row, applies one of these and
// writes what changed. None touches storage.

// The columns of every store's operations table, in the order the stores
// read and insert them.
inline constexpr char kOperationColumns[] =
    "id, owner, idempotency_key_hash, fingerprint, request, sealed_credentials, status, "
    "created_at_ms, started_at_ms, finished_at_ms, expires_at_ms, version, cancel_requested, "
    "result, claimed_by, expired, lease_expires_at_ms";

// OK for an operation CreateOrGet may insert: non-empty id, owner and key
// hash; status queued; version 1; no start/finish time, result, claimer,
// cancel request or expiry. InvalidArgument otherwise.
absl::Status ValidateFresh(const Operation& op);

// InvalidArgument unless `status` is terminal (Finish's precondition).
absl::Status ValidateFinishStatus(OperationStatus status);

// Entering a terminal state drops what only a run needs (operation.h):
// status, finished_at_ms = now, request and credentials cleared, lease
// dropped, version + 1.
void EnterTerminal(Operation& op, OperationStatus status, int64_t now_ms);

// queued -> running for `runner_id`, started now, leased until now +
// lease_ms, version + 1.
void ApplyClaim(Operation& op, const std::string& runner_id, int64_t now_ms, int64_t lease_ms);

// InvalidArgument unless `runner_id` is non-empty and lease_ms > 0 (the
// preconditions of ClaimNext and RenewLeases).
absl::Status ValidateLease(const std::string& runner_id, int64_t lease_ms);

// now + lease_ms, saturating instead of overflowing. Requires lease_ms > 0.
int64_t LeaseEnd(int64_t now_ms, int64_t lease_ms);

// running -> `status` with `result`. FailedPrecondition unless running.
absl::Status ApplyFinish(Operation& op, OperationStatus status, const std::string& result,
                         int64_t now_ms);

// queued -> cancelled; running -> cancel_requested (the version stays: not a
// status or time change). Returns whether `op` changed.
bool ApplyCancel(Operation& op, int64_t now_ms);

// The expiry time at or before which tombstones are deleted, saturating
// instead of overflowing. Requires keep_ms >= 0.
int64_t TombstoneCutoff(int64_t now_ms, int64_t keep_ms);

// The contract's error space: NotFound, FailedPrecondition and Unavailable
// pass through; any other storage failure is Internal. (A store checks its
// arguments before it calls this.)
absl::Status ToStoreError(absl::Status s);

template <typename T>
absl::StatusOr<T> ToStoreError(absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return ToStoreError(v.status());
}

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_OPERATION_TRANSITIONS_H_
