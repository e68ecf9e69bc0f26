#ifndef AEVATAR_STORE_GROUP_COMMIT_H_
#define AEVATAR_STORE_GROUP_COMMIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/sqlite_db.h"

namespace aevatar::store {

// Writes of several threads to one SQLite database, committed together as
// one transaction, so that the writes that arrive while a commit syncs the
// WAL share the next sync (synchronous=FULL: one fdatasync per commit, the
// cost that serialized a busy store) instead of queueing for one each.
//
// Nothing about durability changes: Run returns only after the transaction
// holding the write committed, and a write that fails is undone on its own
// (a savepoint) without touching the others in its group. A failure that
// ends the whole transaction (an I/O error, a failed COMMIT) fails every
// write of the group: the one that ended it with its own error, the others
// Unavailable (retryable) or with the COMMIT's error. Writes in a group run
// one after another, in arrival order, each seeing the ones before it, as if
// each had its own transaction.
class GroupCommit {
 public:
  // Runs with the database's lock held, inside the shared transaction; an
  // error status undoes what it wrote. It must not call Run.
  using Write = std::function<absl::Status()>;

  // `db` is guarded by `db_lock`, which the group takes while it writes.
  GroupCommit(Database* db, absl::Mutex* db_lock) : db_(db), db_lock_(db_lock) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Runs `write` in the next group's transaction and returns its outcome
  // once that transaction committed (or failed). The caller must not hold
  // the database's lock.
  absl::Status Run(const Write& write) ABSL_LOCKS_EXCLUDED(mu_);

  // Run, for a write that yields a value: the value once the transaction
  // holding the write committed, else the error (the write's own, or the
  // group's). Same contract for `write` as Run's.
  template <typename T>
  absl::StatusOr<T> RunForValue(const std::function<absl::StatusOr<T>()>& write)
      ABSL_LOCKS_EXCLUDED(mu_) {
    std::optional<absl::StatusOr<T>> value;
    absl::Status committed = Run([&]() -> absl::Status {
      value = write();
      return value->status();
    });
    if (!committed.ok()) return committed;
    return std::move(**value);
  }

  // Writes waiting for the next group, and groups written so far: what a
  // test needs to see groups form.
  size_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t groups_written() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pending {
    const Write* write;
    absl::Status result;
    bool done = false;
  };
  // Begins, runs each write under its savepoint, commits; sets each result.
  void WriteGroup(const std::vector<Pending*>& group);

  Database* const db_;
  absl::Mutex* const db_lock_;
  mutable absl::Mutex mu_;
  absl::CondVar written_;                             // a group ended
  std::vector<Pending*> queue_ ABSL_GUARDED_BY(mu_);  // waiting for the next group
  bool writing_ ABSL_GUARDED_BY(mu_) = false;         // a group is being written
  int64_t groups_written_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_GROUP_COMMIT_H_
