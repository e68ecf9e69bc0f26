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

std::optional<int64_t> RunPace::UsPerRun(int64_t now_ms) const {
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
  return std::max<int64_t>(1, busy_ms * 1000 / (count - 1));
}

namespace {

constexpr int64_t kMinSecs = 1;
constexpr int64_t kMaxSecs = 30;  // aevatar's cap on any retry delay
// Past a second the hint is two thirds of the estimated wait
// (QueuedPollAfterMs): a caller polls about log3(wait / 1 s) + 2 times in
// all, and an estimate made while the executor ran slower than it does by
// then (a burst of new work competing for the CPUs: a third slower, in a
// burst of 1,000 one-step runs) comes back before the run ends. So the cap is
// reached at one and a half times the cap.
constexpr int64_t kMaxWaitMs = kMaxSecs * 1000 * 3 / 2;

}  // namespace

int64_t AheadWorthCounting(int64_t us_per_run) {
  return kMaxWaitMs * 1000 / std::max<int64_t>(us_per_run, 1);
}

int64_t QueuedPollAfterMs(int64_t ahead, int64_t us_per_run) {
  us_per_run = std::max<int64_t>(us_per_run, 1);
  ahead = std::max<int64_t>(ahead, 0);
  if (ahead >= AheadWorthCounting(us_per_run)) return kMaxSecs * 1000;  // and no overflow below
  const int64_t wait_ms = (ahead + 1) * us_per_run / 1000;
  const int64_t hint_ms = std::max(std::min(wait_ms * 85 / 100, int64_t{850}), wait_ms * 2 / 3);
  return std::clamp(hint_ms, kMinPollMs, kMaxSecs * 1000);
}

int64_t PollAfterSecs(int64_t ahead, std::optional<int64_t> us_per_run) {
  if (!us_per_run || *us_per_run <= 0) return kMinSecs;
  // Rounded up: never sooner than the finer hint beside it.
  const int64_t hint_ms = QueuedPollAfterMs(ahead, *us_per_run);
  return std::clamp<int64_t>((hint_ms + 999) / 1000, kMinSecs, kMaxSecs);
}

std::optional<int64_t> PollAfterMs(int64_t expected_wait_ms) {
  if (expected_wait_ms < 0 || expected_wait_ms >= 1000) return std::nullopt;
  return std::max(expected_wait_ms, kMinPollMs);
}

}  // namespace aevatar::chrono
