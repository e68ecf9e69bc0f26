#ifndef AEVATAR_AEVATAR_AUDIT_AUDIT_LOG_H_
#define AEVATAR_AEVATAR_AUDIT_AUDIT_LOG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/audit/audit_record.h"

namespace aevatar::orchestrator {

// The orchestrator's append-only audit log, with semantic idempotency (see
// the theory block in audit_record.h).
//
// Append-only: a record, once appended, is never changed or removed; there is
// no update or delete operation in this interface or in any implementation.
// Thread-safe: any method may be called from any thread.
class AuditLog {
 public:
  virtual ~AuditLog() = default;

  // Appends `record` unless its slot (SemanticKey) is already taken.
  //
  // Sets record_id (when empty, to base::RandomId("aud_")), recorded_at_ms
  // (now) and content_hash (ContentHash) before storing; the fact is stored
  // exactly as given. Returns
  //   kAppended   the record is durable before Append returns;
  //   kDuplicate  the slot holds a record with the same ContentHash (e.g. a
  //               retry that differs only in trace or timestamps): nothing
  //               written;
  //   kConflict   the slot holds a record with a different ContentHash (a
  //               changed fact, correlation, causation, request, approval,
  //               call or workflow id): nothing written, the stored record
  //               wins.
  // Errors: InvalidArgument (ValidateAuditRecord), Unavailable when the store
  // cannot be reached (retry with the same record is safe), Internal.
  virtual absl::StatusOr<AppendOutcome> Append(AuditRecord record) = 0;

  // Returns every record of `run_id` in append order (empty if none), with
  // the record_id, timestamps, trace and content_hash as stored.
  virtual absl::StatusOr<std::vector<AuditRecord>> ForRun(const std::string& run_id) = 0;
};

// A test/ops wrapper that simulates an audit-store outage: fails the next `n`
// Appends with Unavailable, writing nothing, then delegates again. ForRun
// always delegates. Thread-safe. `inner` must outlive the wrapper.
class FlakyAuditLog : public AuditLog {
 public:
  explicit FlakyAuditLog(AuditLog* inner) : inner_(inner) {}

  // Makes the next `n` Appends (counted across threads) fail. Replaces any
  // remaining count; n <= 0 clears it.
  void FailNext(int n) {
    absl::MutexLock lock(&mu_);
    remaining_failures_ = n > 0 ? n : 0;
  }

  // Appends that were failed on purpose so far.
  int InjectedFailures() const {
    absl::MutexLock lock(&mu_);
    return injected_failures_;
  }

  absl::StatusOr<AppendOutcome> Append(AuditRecord record) override {
    {
      absl::MutexLock lock(&mu_);
      if (remaining_failures_ > 0) {
        --remaining_failures_;
        ++injected_failures_;
        return absl::UnavailableError("audit store unavailable (injected failure)");
      }
    }
    // Outside the lock: the inner log serializes itself, and holding mu_ here
    // would make concurrent callers wait on each other's disk writes.
    return inner_->Append(std::move(record));
  }

  absl::StatusOr<std::vector<AuditRecord>> ForRun(const std::string& run_id) override {
    return inner_->ForRun(run_id);
  }

 private:
  AuditLog* const inner_;
  mutable absl::Mutex mu_;
  int remaining_failures_ ABSL_GUARDED_BY(mu_) = 0;
  int injected_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_AUDIT_AUDIT_LOG_H_
