#ifndef AEVATAR_OS_NETNS_POOL_H_
#define AEVATAR_OS_NETNS_POOL_H_

#include <cstddef>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "os/unique_fd.h"

namespace aevatar::os {

// Moves the calling thread into a new network namespace (loopback only, up)
// and returns a handle to it (O_CLOEXEC). The thread stays in it: call this
// only on a thread that runs nothing else afterwards.
absl::StatusOr<UniqueFd> UnshareEmptyNetns();

// Fresh, empty network namespaces (only loopback, up), made ahead of time on
// a background thread so that creating one stays off a run's critical path.
// Each namespace is handed out once and never reused: a run joins it with
// setns(2) and it dies with the run. Thread-safe.
class NetnsPool {
 public:
  // Keeps `target_size` namespaces ready. With `lifetime_total` > 0 the pool
  // makes only that many in all (a one-shot process that runs once wants its
  // one namespace made while it does other set-up, and no refill after).
  explicit NetnsPool(size_t target_size = 4, size_t lifetime_total = 0);
  ~NetnsPool();
  NetnsPool(const NetnsPool&) = delete;
  NetnsPool& operator=(const NetnsPool&) = delete;

  // Returns a namespace fd (O_CLOEXEC), waiting for the refill thread when
  // the pool is empty. Errors when namespaces cannot be created.
  absl::StatusOr<UniqueFd> Take();

 private:
  void RefillLoop();
  bool Exhausted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return lifetime_total_ > 0 && made_ >= lifetime_total_;
  }
  // Take can answer: a namespace, an error, or no more to come.
  bool TakeReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !ready_.empty() || !last_error_.ok() || stopping_ || Exhausted();
  }
  bool RefillDue() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || ready_.size() < target_size_;
  }

  const size_t target_size_;
  const size_t lifetime_total_;
  mutable absl::Mutex mu_;  // waiters Await TakeReady / RefillDue
  size_t made_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<UniqueFd> ready_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Lives in the namespace it made last; it runs nothing else.
  std::thread refill_;
};

}  // namespace aevatar::os

#endif  // AEVATAR_OS_NETNS_POOL_H_
