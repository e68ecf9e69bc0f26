#include "chrono/run_pace.h"

#include <algorithm>

namespace aevatar::chrono {

void RunPace::Finished(int64_t started_ms, int64_t finished_ms) {
  absl::MutexLock lock(&mu_);
  // The wall clock stepped back: what was recorded is in the "future".
  if (!finishes_.empty() && finished_ms < finishes_.back().at_ms - kRecentMs) finishes_.clear();
  const Finish finish{started_ms, finished_ms};
  // Workers may report out of order by a moment: keep the times sorted.
  finishes_.insert(
      std::upper_bound(finishes_.begin(), finishes_.end(), finish,
                       [](const Finish& a, const Finish& b) { return a.at_ms < b.at_ms; }),
      finish);
  if (finishes_.size() > kWindow) finishes_.pop_front();
}

std::optional<int64_t> RunPace::MsPerRun(int64_t now_ms) const {
  absl::MutexLock lock(&mu_);
  if (finishes_.empty() || now_ms - finishes_.back().at_ms > kFreshMs) return std::nullopt;
  // The oldest finish still recent; finishes_ is in time order.
  auto first = std::partition_point(finishes_.begin(), finishes_.end(), [&](const Finish& finish) {
    return finish.at_ms < now_ms - kRecentMs;
  });
  const auto count = static_cast<int64_t>(finishes_.end() - first);
  if (count < kMinFinishes) return std::nullopt;
  // A run's time before the finish ahead of it was that finish's; a long
  // run that ended first in the window counts only from there.
  int64_t busy_ms = 0;
  for (auto finish = first + 1; finish != finishes_.end(); ++finish) {
    busy_ms +=
        std::max<int64_t>(finish->at_ms - std::max(finish->started_ms, (finish - 1)->at_ms), 0);
  }
  return std::max<int64_t>(1, busy_ms / (count - 1));
}

namespace {

constexpr int64_t kMinSecs = 1;
constexpr int64_t kMaxSecs = 30;  // aevatar's cap on any retry delay
// The hint is half the estimated wait (PollAfterSecs): a caller polls about
// log2(wait) times in all, and an estimate made while the executor ran
// slower than it does by then (a burst of new work competing for the CPUs)
// costs at most half of it. So the cap is reached at twice the cap.
constexpr int64_t kMaxWaitMs = 2 * kMaxSecs * 1000;

}  // namespace

int64_t AheadWorthCounting(int64_t ms_per_run) {
  return kMaxWaitMs / std::max<int64_t>(ms_per_run, 1);
}

int64_t PollAfterSecs(int64_t ahead, std::optional<int64_t> ms_per_run) {
  if (!ms_per_run || *ms_per_run <= 0) return kMinSecs;
  ahead = std::max<int64_t>(ahead, 0);
  if (ahead >= AheadWorthCounting(*ms_per_run)) return kMaxSecs;  // and no overflow below
  const int64_t wait_ms = (ahead + 1) * *ms_per_run;
  return std::clamp<int64_t>(wait_ms / 2 / 1000, kMinSecs, kMaxSecs);
}

std::optional<int64_t> PollAfterMs(int64_t expected_wait_ms) {
  if (expected_wait_ms < 0 || expected_wait_ms >= 1000) return std::nullopt;
  return std::max(expected_wait_ms, kMinPollMs);
}

}  // namespace aevatar::chrono
