#ifndef AEVATAR_CHRONO_RUN_PACE_H_
#define AEVATAR_CHRONO_RUN_PACE_H_

#include <cstdint>
#include <deque>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::chrono {

// How fast this executor has been finishing durable runs lately: what the
// Retry-After of a queued operation is estimated from, so that a caller far
// back in the queue polls once near its turn instead of every second.
//
// Each finish counts the time the executor was busy for it since the finish
// before it: from that finish, or from the run's start when the run started
// later (nothing ran in between). The gaps between finishes alone would read
// a trickle of one short run a second as a pace of a second a run, and tell
// the first callers of a burst to come back far too late. Thread-safe.
class RunPace {
 public:
  // The most recent finishes kept, and how many within kRecentMs are needed
  // before a pace is given at all.
  static constexpr int kWindow = 128;
  static constexpr int kMinFinishes = 4;
  // Finishes older than this say nothing about the queue of now.
  static constexpr int64_t kRecentMs = 10000;
  // Nothing finished for this long: what runs now is slower than the pace.
  static constexpr int64_t kFreshMs = 3000;

  // A run that started at `started_ms` finished at `finished_ms`.
  void Finished(int64_t started_ms, int64_t finished_ms) ABSL_LOCKS_EXCLUDED(mu_);

  // Mean busy microseconds between consecutive finishes of the last
  // kRecentMs (at least 1), or nullopt with fewer than kMinFinishes of them
  // or none within kFreshMs of now_ms. Worked out here, from the finishes in
  // time order, so reports that arrive out of order count the same. Finer
  // than the millisecond times it comes from: at a few milliseconds a run,
  // a whole-millisecond mean would be up to a fifth short, and every hint
  // built on it as early.
  std::optional<int64_t> UsPerRun(int64_t now_ms) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Finish {
    int64_t started_ms;
    int64_t at_ms;
  };
  mutable absl::Mutex mu_;
  std::deque<Finish> finishes_ ABSL_GUARDED_BY(mu_);  // oldest first, at most kWindow
};

// Milliseconds a caller should wait before reading a queued operation whose
// end `ahead` finishes precede (those queued ahead of it, and those running
// when all workers are busy) at `us_per_run`: the time the pace needs for
// them and its own when that is a second or less (at least kMinPollMs), else
// two thirds of it and at least a second, at most 30 s. Early rather than
// late: a hint that overshoots delays the result, one that falls short
// costs a read.
int64_t QueuedPollAfterMs(int64_t ahead, int64_t us_per_run);

// The same in whole seconds, rounded up, within [1, 30]: Retry-After beside
// QueuedPollAfterMs's Retry-After-Ms. 1 without a pace.
int64_t PollAfterSecs(int64_t ahead, std::optional<int64_t> us_per_run);

// The finer hint beside Retry-After (Retry-After-Ms) for a running operation,
// or a queued one with nothing ahead, expected to end within a second: `expected_wait_ms`, at least
// kMinPollMs; nullopt from a second on, where whole seconds say enough, and for a negative wait (a
// clock that stepped back, or another replica's clock ahead: no estimate at all). Without it a run
// of a few milliseconds is read a whole second after it ended.
inline constexpr int64_t kMinPollMs = 50;
std::optional<int64_t> PollAfterMs(int64_t expected_wait_ms);

// How many operations ahead are worth counting at `us_per_run`: from that
// many on, PollAfterSecs gives its cap, so a store need not count further.
int64_t AheadWorthCounting(int64_t us_per_run);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_RUN_PACE_H_
