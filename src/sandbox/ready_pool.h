#ifndef AEVATAR_SANDBOX_READY_POOL_H_
#define AEVATAR_SANDBOX_READY_POOL_H_

#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace aevatar::sandbox {

// Keeps `target` items made ahead of time by `make`, on a thread of its own
// that lives as long as the pool: an item may be tied to the thread that
// made it (a sandbox init dies with the thread that spawned it). A failed
// `make` is retried after `retry_after`, so a broken host does not spin.
// Take never waits: no item ready means the caller does the work itself.
// Items still in the pool when it goes are destroyed after its thread has
// stopped. Thread-safe.
template <typename T>
class ReadyPool {
 public:
  using Make = std::function<absl::StatusOr<std::unique_ptr<T>>()>;

  ReadyPool(size_t target, Make make, absl::Duration retry_after = absl::Seconds(1))
      : target_(target), make_(std::move(make)), retry_after_(retry_after) {
    thread_ = std::thread([this] { FillLoop(); });
  }
  ~ReadyPool() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }
  ReadyPool(const ReadyPool&) = delete;
  ReadyPool& operator=(const ReadyPool&) = delete;

  // A ready item, or null when none is.
  std::unique_ptr<T> Take() {
    absl::MutexLock lock(&mu_);
    if (ready_.empty()) return nullptr;
    std::unique_ptr<T> item = std::move(ready_.front());
    ready_.pop_front();
    return item;
  }

  size_t ready() const {
    absl::MutexLock lock(&mu_);
    return ready_.size();
  }
  size_t failures() const {
    absl::MutexLock lock(&mu_);
    return failures_;
  }

 private:
  bool FillDue() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || ready_.size() < target_;
  }
  bool Stopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; }

  // `make`, with an exception (say bad_alloc) counted as a failure: on this
  // thread it would otherwise end the whole process.
  absl::StatusOr<std::unique_ptr<T>> MakeOne() {
    try {
      return make_();
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  void FillLoop() {
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &ReadyPool::FillDue));
        if (stopping_) return;
      }
      absl::StatusOr<std::unique_ptr<T>> made = MakeOne();
      absl::MutexLock lock(&mu_);
      if (made.ok()) {
        ready_.push_back(std::move(*made));
        continue;
      }
      ++failures_;
      mu_.AwaitWithTimeout(absl::Condition(this, &ReadyPool::Stopping), retry_after_);
    }
  }

  const size_t target_;
  const Make make_;
  const absl::Duration retry_after_;
  mutable absl::Mutex mu_;
  std::deque<std::unique_ptr<T>> ready_ ABSL_GUARDED_BY(mu_);
  size_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started last, joined first
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_READY_POOL_H_
