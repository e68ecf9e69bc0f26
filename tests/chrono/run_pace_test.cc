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
  EXPECT_EQ(pace.MsPerRun(kT0), std::nullopt);
  const int64_t end = BackToBack(pace, kT0, RunPace::kMinFinishes - 1, 100);
  EXPECT_EQ(pace.MsPerRun(end), std::nullopt);
  EXPECT_EQ(pace.MsPerRun(BackToBack(pace, end, 1, 100)), 100);
}

TEST(RunPace, IsTheMeanBusyTimeWhateverOrderWorkersReportThem) {
  RunPace pace;  // six runs on several workers, all started at once
  for (int64_t at : {50, 250, 200, 100, 150, 300}) pace.Finished(kT0, kT0 + at);
  // The first finish opens the window: 250 ms busy over the five after it.
  EXPECT_EQ(pace.MsPerRun(kT0 + 300), 50);
}

TEST(RunPace, RunsThatOverlapCountTheSameInAnyOrderOfReport) {
  // Two workers: runs of 100 ms, one starting every 50 ms.
  const int64_t order[] = {3, 0, 4, 1, 2};
  RunPace pace;
  for (int64_t i : order) pace.Finished(kT0 + i * 50, kT0 + i * 50 + 100);
  EXPECT_EQ(pace.MsPerRun(kT0 + 300), 50);
}

TEST(RunPace, ALongRunThatEndedFirstDoesNotCountItsWholeLength) {
  RunPace pace;
  pace.Finished(kT0 - 300'000, kT0);  // a five-minute run
  EXPECT_EQ(pace.MsPerRun(BackToBack(pace, kT0, 3, 10)), 10);
}

TEST(RunPace, ATrickleOfShortRunsReadsAsTheirLengthNotTheGapsBetweenThem) {
  RunPace pace;  // a 20 ms run every second: the executor idles in between
  for (int i = 0; i < 5; ++i) pace.Finished(kT0 + i * 1000, kT0 + i * 1000 + 20);
  EXPECT_EQ(pace.MsPerRun(kT0 + 4020), 20);
}

TEST(RunPace, ForgetsFinishesOlderThanTheRecentWindow) {
  RunPace pace;
  BackToBack(pace, kT0, 8, 10);  // a burst long ago
  const int64_t later = kT0 + RunPace::kRecentMs + 1000;
  EXPECT_EQ(pace.MsPerRun(BackToBack(pace, later, 4, 200)), 200);
}

TEST(RunPace, SaysNothingOnceNothingFinishedForAWhile) {
  RunPace pace;
  const int64_t end = BackToBack(pace, kT0, 8, 10);
  EXPECT_EQ(pace.MsPerRun(end + RunPace::kFreshMs), 10);
  EXPECT_EQ(pace.MsPerRun(end + RunPace::kFreshMs + 1), std::nullopt);
}

TEST(RunPace, StartsAfreshWhenTheWallClockStepsBack) {
  RunPace pace;
  BackToBack(pace, kT0, 8, 10);
  const int64_t earlier = kT0 - RunPace::kRecentMs - 1000;  // an NTP step back
  EXPECT_EQ(pace.MsPerRun(BackToBack(pace, earlier, 4, 300)), 300);
}

TEST(RunPace, NeverReportsLessThanOneMillisecond) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0, kT0);
  EXPECT_EQ(pace.MsPerRun(kT0), 1);
}

TEST(PollAfterSecs, IsHalfTheTimeTheQueueAheadNeedsRoundedDownWithinOneToThirtySeconds) {
  EXPECT_EQ(PollAfterSecs(0, std::nullopt), 1);
  EXPECT_EQ(PollAfterSecs(500, std::nullopt), 1);  // no pace: the old one second
  EXPECT_EQ(PollAfterSecs(0, 400), 1);
  EXPECT_EQ(PollAfterSecs(4, 400), 1);   // five runs of 400 ms: 2 s, half of it
  EXPECT_EQ(PollAfterSecs(9, 400), 2);   // ten: 4 s
  EXPECT_EQ(PollAfterSecs(10, 400), 2);  // eleven: 4.4 s, 2.2 rounded down
  EXPECT_EQ(PollAfterSecs(59, 1000), 30);
  EXPECT_EQ(PollAfterSecs(100, 1000), 30);  // capped like aevatar's retry delay
  EXPECT_EQ(PollAfterSecs(5, 0), 1);        // a pace that cannot be
  EXPECT_EQ(PollAfterSecs(int64_t{1} << 40, int64_t{1} << 20), 30);  // no overflow
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
  for (int64_t ms_per_run : {1, 7, 400, 1000, 60000, 90000}) {
    const int64_t enough = AheadWorthCounting(ms_per_run);
    EXPECT_EQ(PollAfterSecs(enough, ms_per_run), 30) << ms_per_run;
    EXPECT_EQ(PollAfterSecs(enough * 10 + 1, ms_per_run), 30) << ms_per_run;
  }
  EXPECT_LT(PollAfterSecs(AheadWorthCounting(400) - 2, 400), 30);
}

}  // namespace
}  // namespace aevatar::chrono
