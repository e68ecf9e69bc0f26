#ifndef AEVATAR_CHRONO_OPERATION_STORE_H_
#define AEVATAR_CHRONO_OPERATION_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/page_cursor.h"
#include "chrono/operation.h"

namespace aevatar::chrono {

struct CreateOutcome {
  Operation operation;  // the stored operation (new, or the one already there)
  bool created = false;
};

// One operation whose lease RenewLeases extended.
struct LeaseRenewal {
  std::string id;
  bool cancel_requested = false;  // the runner should kill it (a cancel reached the store)
};

// Which of an owner's operations ListOwned returns.
struct OperationListQuery {
  std::string owner;
  std::optional<OperationStatus> status;  // nullopt: every status
  int limit = 50;                         // at most this many (>= 1)
  // Only operations after this one in the listing order (created_at_ms, then
  // id, both descending); nullopt: from the newest.
  std::optional<base::PagePosition> after;
  int64_t now_ms = 0;  // operations whose retention ended by now are left out
};

// Durable storage of operations. Implementations: SQLite (embedded default)
// and PostgreSQL (shared by replicas). Every method is atomic and
// thread-safe; every state change is committed before it returns, so a crash
// right after a call never loses it. Errors are Unavailable/Internal for the
// storage itself, NotFound for an unknown id, FailedPrecondition for a
// transition the current state does not allow.
class OperationStore {
 public:
  virtual ~OperationStore() = default;

  // Inserts `op` unless an operation with the same (owner,
  // idempotency_key_hash) exists; returns whichever is stored. Concurrent
  // identical calls create exactly one. The caller compares fingerprints.
  virtual absl::StatusOr<CreateOutcome> CreateOrGet(const Operation& op) = 0;

  virtual absl::StatusOr<Operation> Get(const std::string& id) = 0;

  // Claims the oldest queued operation for `runner_id`: status running,
  // claimed_by = runner_id, started_at_ms = now, lease_expires_at_ms = now +
  // lease_ms, version + 1. nullopt when nothing is queued. Concurrent
  // claimers (threads, processes, replicas) never get the same operation.
  // InvalidArgument for an empty runner_id or lease_ms <= 0.
  virtual absl::StatusOr<std::optional<Operation>> ClaimNext(const std::string& runner_id,
                                                             int64_t now_ms, int64_t lease_ms) = 0;

  // The runner's heartbeat: of `ids`, those still running and claimed by
  // `runner_id` get lease_expires_at_ms = now + lease_ms and are returned
  // with their cancel flags (version unchanged: the lease is not part of the
  // status document). An id left out is no longer this runner's to run
  // (settled by another runner, or unknown): the runner should stop it.
  // InvalidArgument for an empty runner_id or lease_ms <= 0.
  virtual absl::StatusOr<std::vector<LeaseRenewal>> RenewLeases(const std::string& runner_id,
                                                                const std::vector<std::string>& ids,
                                                                int64_t now_ms,
                                                                int64_t lease_ms) = 0;

  // Running operations whose lease_expires_at_ms <= now (their runner
  // stopped renewing: it died or lost the store) become outcome_uncertain
  // (terminal, payloads dropped, version + 1); never queued again. Safe to
  // call from every runner at once: each operation is settled once. Returns
  // how many this call settled.
  virtual absl::StatusOr<int> SettleExpiredLeases(int64_t now_ms) = 0;

  // running -> `status` (terminal) with `result`; sets finished_at_ms, clears
  // request and sealed_credentials, version + 1. FailedPrecondition unless
  // running.
  virtual absl::StatusOr<Operation> Finish(const std::string& id, OperationStatus status,
                                           const std::string& result, int64_t now_ms) = 0;

  // A worker's end of one run and start of the next: Finish(id, status,
  // result, now_ms), then ClaimNext(runner_id, now_ms, lease_ms). OK: the
  // finish is durable, and the operation claimed next, if any. An error:
  // nothing was finished (the caller finishes alone). This default does the
  // two one after the other (a failed claim is then logged and no claim: the
  // worker claims again after its idle poll); a store that
  // can make them one durable write (one sync) does.
  virtual absl::StatusOr<std::optional<Operation>> FinishAndClaimNext(
      const std::string& id, OperationStatus status, const std::string& result,
      const std::string& runner_id, int64_t now_ms, int64_t lease_ms);

  // queued -> cancelled (terminal, payloads cleared, version + 1); running ->
  // cancel_requested = true (the runner kills it and finishes it as
  // cancelled); terminal -> unchanged. Returns the operation afterwards.
  virtual absl::StatusOr<Operation> RequestCancel(const std::string& id, int64_t now_ms) = 0;

  // At start-up: running operations claimed by `runner_id` become
  // outcome_uncertain (terminal, version + 1); other runners' are untouched.
  // Returns how many. InvalidArgument for an empty runner_id (there is no
  // "every runner": on a shared store that would end other instances' runs).
  virtual absl::StatusOr<int> MarkRunningUncertain(const std::string& runner_id,
                                                   int64_t now_ms) = 0;

  // Terminal operations whose expires_at_ms <= now become tombstones:
  // expired = true, request/result/credentials dropped (so a late read gets
  // 410, not 404). Tombstones are deleted `tombstone_keep_ms` after expiry.
  // Returns how many operations expired in this call.
  virtual absl::StatusOr<int> ExpireOld(int64_t now_ms, int64_t tombstone_keep_ms) = 0;

  virtual absl::StatusOr<int64_t> CountWithStatus(OperationStatus status) = 0;
  // Queued operations that a claim takes before `op` (ClaimNext's order:
  // older first, then the smaller id), counted up to `at_most` (>= 0), so a
  // status read costs no more than the caller needs whatever the queue holds.
  virtual absl::StatusOr<int64_t> CountQueuedAhead(const Operation& op, int64_t at_most) = 0;

  // `query.owner`'s operations with `query.status`, newest first
  // (created_at_ms, then id, both descending), after `query.after`, at most
  // `query.limit`; tombstones and terminal operations whose retention ended
  // by `query.now_ms` are left out (their status route answers 410).
  virtual absl::StatusOr<std::vector<Operation>> ListOwned(const OperationListQuery& query) = 0;

  // Reachability probe for /readyz.
  virtual absl::Status Ping() = 0;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_OPERATION_STORE_H_
