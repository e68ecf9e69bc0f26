#include "sandbox/verdict.h"

#include <signal.h>

#include "gtest/gtest.h"

namespace aevatar::sandbox {
namespace {

int Exited(int code) { return code << 8; }
int Killed(int sig) { return sig; }

RunResult Classify(const RunFacts& facts) {
  RunResult result;
  ApplyVerdict(facts, result);
  return result;
}

TEST(ApplyVerdict, CleanExitIsOk) {
  RunResult r = Classify({.wait_status = Exited(0)});
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.signal, 0);
}

TEST(ApplyVerdict, NonzeroExitKeepsTheCode) {
  RunResult r = Classify({.wait_status = Exited(3)});
  EXPECT_EQ(r.verdict, Verdict::kNonzeroExit);
  EXPECT_EQ(r.exit_code, 3);
}

TEST(ApplyVerdict, SignalIsReportedAs128PlusSignal) {
  RunResult r = Classify({.wait_status = Killed(SIGSEGV)});
  EXPECT_EQ(r.verdict, Verdict::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
}

TEST(ApplyVerdict, LimitsBecomeTypedVerdicts) {
  EXPECT_EQ(Classify({.wait_status = Killed(SIGKILL), .wall_timeout = true}).verdict,
            Verdict::kWallTimeout);
  EXPECT_EQ(Classify({.wait_status = Killed(SIGKILL), .oom_kills = 1}).verdict,
            Verdict::kMemoryLimit);
  EXPECT_EQ(Classify({.wait_status = Killed(SIGXCPU)}).verdict, Verdict::kCpuLimit);
  EXPECT_EQ(
      Classify({.wait_status = Killed(SIGKILL), .stage_cpu_ms = 2100, .cpu_limit_secs = 2}).verdict,
      Verdict::kCpuLimit);
  EXPECT_EQ(Classify({.wait_status = Killed(SIGXFSZ)}).verdict, Verdict::kFileSizeLimit);
  EXPECT_EQ(Classify({.wait_status = Exited(1), .pids_max_events = 5}).verdict,
            Verdict::kPidsLimit);
  EXPECT_EQ(Classify({.wait_status = Exited(0), .output_truncated = true}).verdict,
            Verdict::kOutputLimit);
}

TEST(ApplyVerdict, WallTimeoutWinsOverEverythingElse) {
  RunResult r = Classify({.wait_status = Killed(SIGKILL),
                          .wall_timeout = true,
                          .oom_kills = 1,
                          .pids_max_events = 1,
                          .output_truncated = true});
  EXPECT_EQ(r.verdict, Verdict::kWallTimeout);
}

TEST(ApplyVerdict, SigkillBelowTheCpuLimitIsNotACpuVerdict) {
  EXPECT_EQ(
      Classify({.wait_status = Killed(SIGKILL), .stage_cpu_ms = 10, .cpu_limit_secs = 2}).verdict,
      Verdict::kSignaled);
}

TEST(ApplyVerdict, CancellationIsCarried) {
  EXPECT_TRUE(Classify({.wait_status = Killed(SIGKILL), .cancelled = true}).cancelled);
}

}  // namespace
}  // namespace aevatar::sandbox
