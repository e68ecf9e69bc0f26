#include "store/group_commit.h"

namespace aevatar::store {

absl::Status GroupCommit::Run(const Write& write) {
  Pending mine{&write, absl::OkStatus(), false};
  mu_.Lock();
  queue_.push_back(&mine);
  // The first to arrive while no group is being written writes every write
  // queued by then (its own among them); the others wait for that group, or
  // for it to end and then lead the next one.
  while (!mine.done) {
    if (writing_) {
      written_.Wait(&mu_);
      continue;
    }
    writing_ = true;
    std::vector<Pending*> group;
    group.swap(queue_);
    mu_.Unlock();
    WriteGroup(group);
    mu_.Lock();
    for (Pending* pending : group) pending->done = true;
    ++groups_written_;
    writing_ = false;
    written_.SignalAll();
  }
  absl::Status result = mine.result;
  mu_.Unlock();
  return result;
}

size_t GroupCommit::waiting() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

int64_t GroupCommit::groups_written() const {
  absl::MutexLock lock(&mu_);
  return groups_written_;
}

void GroupCommit::WriteGroup(const std::vector<Pending*>& group) {
  absl::MutexLock lock(db_lock_);
  auto fail_all = [&](const absl::Status& status) {
    for (Pending* pending : group) {
      if (pending->result.ok()) pending->result = status;
    }
  };
  auto txn = Transaction::Begin(*db_);
  if (!txn.ok()) return fail_all(txn.status());
  for (Pending* pending : group) {
    if (absl::Status s = db_->Run("SAVEPOINT group_write").status(); !s.ok()) return fail_all(s);
    try {
      pending->result = (*pending->write)();
    } catch (...) {  // the others of the group still get their answer
      pending->result = absl::InternalError("a grouped write raised an exception");
    }
    // An I/O error, a full disk or an interrupt ends the whole transaction:
    // what the group wrote so far is gone with it.
    if (!db_->InTransaction()) {
      // Unavailable: the others' writes did not fail; sent again, they commit.
      return fail_all(absl::UnavailableError("the shared transaction was rolled back"));
    }
    if (!pending->result.ok()) {
      if (absl::Status s = db_->Run("ROLLBACK TO group_write").status(); !s.ok())
        return fail_all(s);
    }
    if (absl::Status s = db_->Run("RELEASE group_write").status(); !s.ok()) return fail_all(s);
  }
  if (absl::Status committed = txn->Commit(); !committed.ok()) fail_all(committed);
}

}  // namespace aevatar::store
