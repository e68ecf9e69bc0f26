#ifndef AEVATAR_BASE_REUSABLE_THREADS_H_
#define AEVATAR_BASE_REUSABLE_THREADS_H_

#include <deque>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace aevatar::base {

// Runs each task on a thread of its own, as std::thread(task).detach()
// would, but on a thread that finished an earlier task when one is idle:
// creating and ending a thread costs ~50 µs on this project's VM, once per
// proxied request before this.
//
// A task never waits for another (a new thread starts when none is idle),
// so a long task (a streamed proxy exchange can last minutes) cannot hold up
// a short one, and a task may block as it likes. A thread idle for
// `idle_timeout` ends, so a burst leaves no threads behind for long.
//
// Thread-safe. Threads hold `this` while they idle: give it static storage
// duration and never destroy it (e.g. a leaked `new`).
class ReusableThreads {
 public:
  explicit ReusableThreads(absl::Duration idle_timeout) : idle_timeout_(idle_timeout) {}
  ReusableThreads(const ReusableThreads&) = delete;
  ReusableThreads& operator=(const ReusableThreads&) = delete;

  void Run(std::function<void()> task);

  // For tests: threads waiting for a task now, and threads alive (running
  // a task or waiting for one).
  int idle() const;
  int alive() const;

 private:
  // Runs `task`, then the tasks handed to this thread while it idles.
  void Work(std::function<void()> task);
  bool Handed() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !handed_.empty(); }

  const absl::Duration idle_timeout_;
  mutable absl::Mutex mu_;
  // Tasks given to idle threads, not yet taken; idle_ does not count the
  // threads they are meant for.
  std::deque<std::function<void()>> handed_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int alive_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_REUSABLE_THREADS_H_
