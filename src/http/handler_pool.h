#ifndef AEVATAR_HTTP_HANDLER_POOL_H_
#define AEVATAR_HTTP_HANDLER_POOL_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

// Private to src/http: the elastic thread pool that runs request handlers.
namespace aevatar::http {

// Runs each task on its own thread: an idle thread when one is waiting, else a
// new one, up to `max_threads` tasks in flight. Handlers may block for minutes
// (a synchronous execution), so tasks never queue behind each other; past the
// bound TrySubmit refuses and the server answers 503 at once. Threads idle for
// `idle_timeout` exit, so a burst does not pin its threads forever.
//
// Worker threads hold a shared_ptr to the pool, so create it with
// std::make_shared. Thread-safe.
class HandlerPool : public std::enable_shared_from_this<HandlerPool> {
 public:
  HandlerPool(int max_threads, std::chrono::milliseconds idle_timeout);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Starts `task` on a pool thread. Returns false, without running it, when
  // `max_threads` tasks are already in flight or Shutdown() has begun.
  // Exceptions escaping `task` are swallowed (the server catches its own).
  bool TrySubmit(std::function<void()> task);

  // Refuses new tasks, waits until running tasks finish or `deadline` passes,
  // joins every thread that has finished and detaches those whose task is
  // still running (they keep the pool alive until they end). Idempotent.
  void Shutdown(std::chrono::steady_clock::time_point deadline);

  // Tasks accepted and not yet finished.
  int busy() const;

 private:
  void WorkerLoop();
  void JoinExitedLocked(std::vector<std::thread>& to_join) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // absl::Condition predicates, evaluated with mu_ held.
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool NoneBusy() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OnlyBusyThreadsLive() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_threads_;
  const std::chrono::milliseconds idle_timeout_;

  // Waits use Mutex::Await on the predicates above, so no signalling is
  // needed: a worker wakes when a task is queued or stopping_ is set, and
  // Shutdown when a task finishes or a thread exits.
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // queued + running
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // threads waiting for work
  int live_ ABSL_GUARDED_BY(mu_) = 0;  // threads not yet exited
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::thread::id, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> exited_ ABSL_GUARDED_BY(mu_);  // to be joined
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_HANDLER_POOL_H_
