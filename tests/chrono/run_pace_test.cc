// The pace behind a queued operation's Retry-After: what recent finishes say
// about when an operation's turn comes, and the bounds of the hint.
#include "chrono/run_pace.h"

#include "gtest/gtest.h"

namespace aevatar::chrono {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000;

// `count` runs of `ms` each, one starting as the one before finished; returns
// when the last finished.
int64_t BackToBack(RunPace& pace, int64_t start, int count, int64_t ms) {
  for (int i = 0; i < count; ++i, start += ms) pace.Finished(start, start + ms);
  return start;
}

TEST(RunPace, GivesNoPaceUntilEnoughRunsFinishedRecently) {
  RunPace pace;
  EXPECT_EQ(pace.UsPerRun(kT0), std::nullopt);
  const int64_t end = BackToBack(pace, kT0, RunPace::kMinFinishes - 1, 100);
  EXPECT_EQ(pace.UsPerRun(end), std::nullopt);
  EXPECT_EQ(pace.UsPerRun(BackToBack(pace, end, 1, 100)), 100000);
}

TEST(RunPace, IsTheMeanBusyTimeWhateverOrderWorkersReportThem) {
  RunPace pace;  // six runs on several workers, all started at once
  for (int64_t at : {50, 250, 200, 100, 150, 300}) pace.Finished(kT0, kT0 + at);
  // The first finish opens the window: 250 ms busy over the five after it.
  EXPECT_EQ(pace.UsPerRun(kT0 + 300), 50000);
}

TEST(RunPace, RunsThatOverlapCountTheSameInAnyOrderOfReport) {
  // Two workers: runs of 100 ms, one starting every 50 ms.
  const int64_t order[] = {3, 0, 4, 1, 2};
  RunPace pace;
  for (int64_t i : order) pace.Finished(kT0 + i * 50, kT0 + i * 50 + 100);
  EXPECT_EQ(pace.UsPerRun(kT0 + 300), 50000);
}

TEST(RunPace, ALongRunThatEndedFirstDoesNotCountItsWholeLength) {
  RunPace pace;
  pace.Finished(kT0 - 300'000, kT0);  // a five-minute run
  EXPECT_EQ(pace.UsPerRun(BackToBack(pace, kT0, 3, 10)), 10000);
}

TEST(RunPace, ATrickleOfShortRunsReadsAsTheirLengthNotTheGapsBetweenThem) {
  RunPace pace;  // a 20 ms run every second: the executor idles in between
  for (int i = 0; i < 5; ++i) pace.Finished(kT0 + i * 1000, kT0 + i * 1000 + 20);
  EXPECT_EQ(pace.UsPerRun(kT0 + 4020), 20000);
}

TEST(RunPace, ForgetsFinishesOlderThanTheRecentWindow) {
  RunPace pace;
  BackToBack(pace, kT0, 8, 10);  // a burst long ago
  const int64_t later = kT0 + RunPace::kRecentMs + 1000;
  EXPECT_EQ(pace.UsPerRun(BackToBack(pace, later, 4, 200)), 200000);
}

TEST(RunPace, SaysNothingOnceNothingFinishedForAWhile) {
  RunPace pace;
  const int64_t end = BackToBack(pace, kT0, 8, 10);
  EXPECT_EQ(pace.UsPerRun(end + RunPace::kFreshMs), 10000);
  EXPECT_EQ(pace.UsPerRun(end + RunPace::kFreshMs + 1), std::nullopt);
}

TEST(RunPace, StartsAfreshWhenTheWallClockStepsBack) {
  RunPace pace;
  BackToBack(pace, kT0, 8, 10);
  const int64_t earlier = kT0 - RunPace::kRecentMs - 1000;  // an NTP step back
  EXPECT_EQ(pace.UsPerRun(BackToBack(pace, earlier, 4, 300)), 300000);
}

TEST(RunPace, NeverReportsZero) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0, kT0);
  EXPECT_EQ(pace.UsPerRun(kT0), 1);
}

TEST(RunPace, IsFinerThanTheMillisecondsItIsMeasuredIn) {
  RunPace pace;  // three finishes every 10 ms: 3.33 ms a run, not 3
  for (int i = 0; i < 31; ++i) pace.Finished(kT0 + i * 10 / 3, kT0 + (i + 1) * 10 / 3);
  EXPECT_EQ(pace.UsPerRun(kT0 + 103), 3333);
}

TEST(QueuedPollAfterMs, ComesBackShortOfTheEstimatedEnd) {
  // Four finishes of 100 ms before it and its own: 500 ms, 85 % of it.
  EXPECT_EQ(QueuedPollAfterMs(4, 100'000), 425);
  // 1.5 s: 85 % caps at 850 ms, two thirds gives 1 s.
  EXPECT_EQ(QueuedPollAfterMs(14, 100'000), 1000);
  // Far off: two thirds of the estimate, closing in over a few reads.
  EXPECT_EQ(QueuedPollAfterMs(29, 100'000), 2000);
  EXPECT_EQ(QueuedPollAfterMs(0, 1'000), kMinPollMs);   // never a tight loop
  EXPECT_EQ(QueuedPollAfterMs(-3, 100'000), 85);        // a count below zero is none
  EXPECT_EQ(QueuedPollAfterMs(100, 1'000'000), 30000);  // capped like aevatar's retry delay
  EXPECT_EQ(QueuedPollAfterMs(int64_t{1} << 40, int64_t{1} << 40), 30000);  // no overflow
  EXPECT_EQ(QueuedPollAfterMs(5, 0), kMinPollMs);                           // a pace that cannot be
}

TEST(PollAfterSecs, IsTheFinerHintRoundedUpWithinOneToThirtySeconds) {
  EXPECT_EQ(PollAfterSecs(0, std::nullopt), 1);
  EXPECT_EQ(PollAfterSecs(500, std::nullopt), 1);  // no pace: the old one second
  EXPECT_EQ(PollAfterSecs(4, 100'000), 1);         // 425 ms
  EXPECT_EQ(PollAfterSecs(29, 100'000), 2);        // 2000 ms
  EXPECT_EQ(PollAfterSecs(30, 100'000), 3);        // 2066 ms, rounded up
  EXPECT_EQ(PollAfterSecs(100, 1'000'000), 30);
  EXPECT_EQ(PollAfterSecs(5, 0), 1);
  for (int64_t ahead : {0, 3, 14, 29, 30, 77, 300}) {
    EXPECT_GE(PollAfterSecs(ahead, 100'000) * 1000, QueuedPollAfterMs(ahead, 100'000)) << ahead;
  }
}

TEST(PollAfterMs, IsTheExpectedWaitWithinASecondAndNeverBelowTheFloor) {
  EXPECT_EQ(PollAfterMs(0), kMinPollMs);
  EXPECT_EQ(PollAfterMs(-5), std::nullopt);  // a clock that stepped back: no estimate
  EXPECT_EQ(PollAfterMs(kMinPollMs + 1), kMinPollMs + 1);
  EXPECT_EQ(PollAfterMs(999), 999);
  EXPECT_EQ(PollAfterMs(1000), std::nullopt);  // whole seconds say enough
  EXPECT_EQ(PollAfterMs(int64_t{1} << 40), std::nullopt);
}

TEST(PollAfterSecs, CountingPastWhatIsWorthCountingChangesNothing) {
  for (int64_t us_per_run : {1, 7'000, 400'000, 1'000'000, 60'000'000, 90'000'000}) {
    const int64_t enough = AheadWorthCounting(us_per_run);
    EXPECT_EQ(QueuedPollAfterMs(enough, us_per_run), 30000) << us_per_run;
    EXPECT_EQ(QueuedPollAfterMs(enough * 10 + 1, us_per_run), 30000) << us_per_run;
  }
  EXPECT_LT(QueuedPollAfterMs(AheadWorthCounting(400'000) - 3, 400'000), 30000);
}

}  // namespace
}  // namespace aevatar::chrono
