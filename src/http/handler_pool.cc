#include "http/handler_pool.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "absl/time/time.h"

namespace aevatar::http {

HandlerPool::HandlerPool(int max_threads, std::chrono::milliseconds idle_timeout)
    : max_threads_(max_threads < 1 ? 1 : max_threads), idle_timeout_(idle_timeout) {}

HandlerPool::~HandlerPool() {
  // Every worker holds a shared_ptr to the pool, so by now each one is past its
  // loop; the last of them may be the thread running this destructor.
  for (auto& [id, thread] : threads_) {
    if (id == std::this_thread::get_id()) {
      thread.detach();
    } else if (thread.joinable()) {
      thread.join();
    }
  }
}

bool HandlerPool::HasWorkOrStopping() const { return !queue_.empty() || stopping_; }

bool HandlerPool::NoneBusy() const { return busy_ == 0; }

bool HandlerPool::OnlyBusyThreadsLive() const { return queue_.empty() && live_ <= busy_; }

bool HandlerPool::TrySubmit(std::function<void()> task) {
  std::vector<std::thread> to_join;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || busy_ >= max_threads_) return false;
    queue_.push_back(std::move(task));
    ++busy_;
    // An idle worker wakes by itself (its Await sees the queued task).
    if (static_cast<size_t>(idle_) < queue_.size()) {
      try {
        std::thread thread([self = shared_from_this()] { self->WorkerLoop(); });
        ++live_;
        std::thread::id id = thread.get_id();
        threads_.emplace(id, std::move(thread));
      } catch (const std::system_error&) {
        // Out of threads: refuse like a full pool rather than queue behind others.
        queue_.pop_back();
        --busy_;
        return false;
      }
    }
    JoinExitedLocked(to_join);
  }
  for (auto& thread : to_join) thread.join();
  return true;
}

void HandlerPool::WorkerLoop() {
  mu_.Lock();
  while (true) {
    if (!queue_.empty()) {
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      mu_.Unlock();
      try {
        task();
      } catch (...) {
        // The server wraps handlers itself; nothing may unwind a pool thread.
      }
      task = nullptr;  // release the task's captures outside the lock
      mu_.Lock();
      --busy_;
      continue;
    }
    if (stopping_) break;
    ++idle_;
    bool woke = mu_.AwaitWithTimeout(absl::Condition(this, &HandlerPool::HasWorkOrStopping),
                                     absl::FromChrono(idle_timeout_));
    --idle_;
    if (!woke) break;  // idle too long: retire this thread
  }
  --live_;
  exited_.push_back(std::this_thread::get_id());
  mu_.Unlock();
}

void HandlerPool::JoinExitedLocked(std::vector<std::thread>& to_join) {
  for (std::thread::id id : exited_) {
    auto it = threads_.find(id);
    if (it == threads_.end()) continue;  // detached by Shutdown
    to_join.push_back(std::move(it->second));
    threads_.erase(it);
  }
  exited_.clear();
}

void HandlerPool::Shutdown(std::chrono::steady_clock::time_point deadline) {
  std::vector<std::thread> to_join;
  std::vector<std::thread> to_detach;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    auto remaining = std::max(std::chrono::steady_clock::duration::zero(),
                              deadline - std::chrono::steady_clock::now());
    mu_.AwaitWithTimeout(absl::Condition(this, &HandlerPool::NoneBusy),
                         absl::FromChrono(remaining));
    // Threads without a task run no user code and exit as soon as they wake.
    mu_.Await(absl::Condition(this, &HandlerPool::OnlyBusyThreadsLive));
    JoinExitedLocked(to_join);
    for (auto& [id, thread] : threads_) to_detach.push_back(std::move(thread));
    threads_.clear();
  }
  for (auto& thread : to_join) thread.join();
  // Past the grace: these tasks still run user code that cannot be interrupted.
  for (auto& thread : to_detach) thread.detach();
}

int HandlerPool::busy() const {
  absl::MutexLock lock(&mu_);
  return busy_;
}

}  // namespace aevatar::http
