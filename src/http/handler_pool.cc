#include "http/handler_pool.h"

#include <system_error>
#include <utility>

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

bool HandlerPool::TrySubmit(std::function<void()> task) {
  std::vector<std::thread> to_join;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || busy_ >= max_threads_) return false;
    queue_.push_back(std::move(task));
    ++busy_;
    if (static_cast<size_t>(idle_) >= queue_.size()) {
      work_cv_.notify_one();
    } else {
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
  std::unique_lock lock(mu_);
  while (true) {
    if (!queue_.empty()) {
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        task();
      } catch (...) {
        // The server wraps handlers itself; nothing may unwind a pool thread.
      }
      task = nullptr;  // release the task's captures outside the lock
      lock.lock();
      --busy_;
      done_cv_.notify_all();
      continue;
    }
    if (stopping_) break;
    ++idle_;
    bool woke =
        work_cv_.wait_for(lock, idle_timeout_, [&] { return !queue_.empty() || stopping_; });
    --idle_;
    if (!woke) break;  // idle too long: retire this thread
  }
  --live_;
  exited_.push_back(std::this_thread::get_id());
  done_cv_.notify_all();
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
    std::unique_lock lock(mu_);
    stopping_ = true;
    work_cv_.notify_all();
    done_cv_.wait_until(lock, deadline, [&] { return busy_ == 0; });
    // Threads without a task run no user code and exit as soon as they wake.
    done_cv_.wait(lock, [&] { return queue_.empty() && live_ <= busy_; });
    JoinExitedLocked(to_join);
    for (auto& [id, thread] : threads_) to_detach.push_back(std::move(thread));
    threads_.clear();
  }
  for (auto& thread : to_join) thread.join();
  // Past the grace: these tasks still run user code that cannot be interrupted.
  for (auto& thread : to_detach) thread.detach();
}

int HandlerPool::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

}  // namespace aevatar::http
