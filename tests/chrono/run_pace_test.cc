// The pace behind a queued operation's Retry-After: what recent finishes say
// about when an operation's turn comes, and the bounds of the hint.
#include "chrono/run_pace.h"

#include "gtest/gtest.h"

namespace aevatar::chrono {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000;

TEST(RunPace, GivesNoPaceUntilEnoughRunsFinishedRecently) {
  RunPace pace;
  EXPECT_EQ(pace.MsPerRun(kT0), std::nullopt);
  for (int i = 0; i < RunPace::kMinFinishes - 1; ++i) pace.Finished(kT0 + i * 100);
  EXPECT_EQ(pace.MsPerRun(kT0 + 400), std::nullopt);
  pace.Finished(kT0 + 300);
  EXPECT_EQ(pace.MsPerRun(kT0 + 400), 100);
}

TEST(RunPace, IsTheMeanGapBetweenRecentFinishesWhateverOrderWorkersReportThem) {
  RunPace pace;
  for (int64_t at : {0, 250, 200, 50, 100, 150}) pace.Finished(kT0 + at);
  EXPECT_EQ(pace.MsPerRun(kT0 + 300), 50);
}

TEST(RunPace, ForgetsFinishesOlderThanTheRecentWindow) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0 + i * 10);  // a burst long ago
  const int64_t later = kT0 + RunPace::kRecentMs + 1000;
  for (int i = 0; i < 4; ++i) pace.Finished(later + i * 200);
  EXPECT_EQ(pace.MsPerRun(later + 600), 200);
}

TEST(RunPace, SaysNothingOnceNothingFinishedForAWhile) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0 + i * 10);
  EXPECT_EQ(pace.MsPerRun(kT0 + 70 + RunPace::kFreshMs), 10);
  EXPECT_EQ(pace.MsPerRun(kT0 + 71 + RunPace::kFreshMs), std::nullopt);
}

TEST(RunPace, StartsAfreshWhenTheWallClockStepsBack) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0 + i * 10);
  const int64_t earlier = kT0 - RunPace::kRecentMs - 1000;  // an NTP step back
  for (int i = 0; i < 4; ++i) pace.Finished(earlier + i * 300);
  EXPECT_EQ(pace.MsPerRun(earlier + 900), 300);
}

TEST(RunPace, NeverReportsLessThanOneMillisecond) {
  RunPace pace;
  for (int i = 0; i < 8; ++i) pace.Finished(kT0);
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
