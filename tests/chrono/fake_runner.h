#ifndef AEVATAR_TESTS_CHRONO_FAKE_RUNNER_H_
#define AEVATAR_TESTS_CHRONO_FAKE_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "sandbox/runner.h"

namespace aevatar::chrono {

// A test double of the sandbox for the executor's tests. Each run holds until
// the gate is open or its cancel fd becomes readable, then "succeeds" with
// the program's source as its stdout (or ends cancelled). Thread-safe.
class FakeRunner : public sandbox::Runner {
 public:
  absl::StatusOr<sandbox::RunResult> Run(const sandbox::RunSpec& spec,
                                         const sandbox::RunControl& control) override;

  // Lets every run, current and future, finish.
  void Open();
  // Holds the runs that start from now on again.
  void Close();
  // Waits until `count` runs have started; false if that takes `timeout`.
  bool WaitStarted(int count, absl::Duration timeout = absl::Seconds(30));
  int started() const;
  // Sources of the runs started so far, in order.
  std::vector<std::string> sources() const;

 private:
  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> sources_ ABSL_GUARDED_BY(mu_);
};

// A wall clock the test moves by hand.
class FakeClock {
 public:
  explicit FakeClock(int64_t start_unix_ms = 1'800'000'000'000) : now_(start_unix_ms) {}
  int64_t Now() const { return now_.load(); }
  void Advance(int64_t ms) { now_ += ms; }
  // The clock as the services take it; reads this object, which must outlive it.
  base::UnixMsClock AsClock() {
    return [this] { return Now(); };
  }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_TESTS_CHRONO_FAKE_RUNNER_H_
