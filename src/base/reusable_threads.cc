#include "base/reusable_threads.h"

#include <thread>
#include <utility>

namespace aevatar::base {

void ReusableThreads::Run(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (idle_ > 0) {
      --idle_;
      handed_.push_back(std::move(task));
      return;
    }
    ++alive_;
  }
  std::thread([this, task = std::move(task)]() mutable { Work(std::move(task)); }).detach();
}

int ReusableThreads::idle() const {
  absl::MutexLock lock(&mu_);
  return idle_;
}

int ReusableThreads::alive() const {
  absl::MutexLock lock(&mu_);
  return alive_;
}

void ReusableThreads::Work(std::function<void()> task) {
  while (true) {
    task();
    task = nullptr;  // its captures go now, not when the next task comes
    absl::MutexLock lock(&mu_);
    ++idle_;
    // True when a task was handed over, even if the wait also timed out.
    if (!mu_.AwaitWithTimeout(absl::Condition(this, &ReusableThreads::Handed), idle_timeout_)) {
      --idle_;
      --alive_;
      return;
    }
    task = std::move(handed_.front());
    handed_.pop_front();
  }
}

}  // namespace aevatar::base
