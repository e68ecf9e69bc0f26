#include "chrono/codex/codex_attach.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

CodexRunResult Result(const std::string& output) {
  CodexRunResult result;
  result.status = "succeeded";
  result.output = output;
  result.diagnostic_id = "diag_1";
  return result;
}

struct Clock {
  std::atomic<int64_t> now{1'000'000};
  CodexAttachRegistry::NowMs fn() {
    return [this] { return now.load(); };
  }
};

TEST(CodexAttach, SameOwnerKeyAndRequestGetTheFirstRunsResultWithoutASecondRun) {
  Clock clock;
  CodexAttachRegistry registry(clock.fn());
  int runs = 0;
  auto run = [&] { return absl::StatusOr<CodexRunResult>(Result("out" + std::to_string(++runs))); };
  auto first = registry.RunOnce("alice", "k1", "fp", run);
  auto second = registry.RunOnce("alice", "k1", "fp", run);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(second->output, "out1");
  EXPECT_EQ(second->diagnostic_id, first->diagnostic_id);
}

TEST(CodexAttach, AnAttachWaitsForTheRunningRun) {
  Clock clock;
  CodexAttachRegistry registry(clock.fn());
  absl::Notification started, release;
  std::atomic<int> runs{0};
  auto run = [&] {
    ++runs;
    started.Notify();
    release.WaitForNotification();
    return absl::StatusOr<CodexRunResult>(Result("slow"));
  };
  absl::StatusOr<CodexRunResult> first, second;
  std::thread a([&] { first = registry.RunOnce("alice", "k", "fp", run); });
  started.WaitForNotification();
  std::thread b([&] { second = registry.RunOnce("alice", "k", "fp", run); });
  // The attach is inside, waiting on the running run, before that run ends.
  EXPECT_TRUE(testing::PollUntil([&] { return registry.waiting() == 1; }));
  release.Notify();
  a.join();
  b.join();
  EXPECT_EQ(runs.load(), 1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->output, "slow");
}

TEST(CodexAttach, SameKeyOtherRequestIs409AndOtherOwnersAreApart) {
  Clock clock;
  CodexAttachRegistry registry(clock.fn());
  int runs = 0;
  auto run = [&] { return absl::StatusOr<CodexRunResult>(Result(std::to_string(++runs))); };
  ASSERT_TRUE(registry.RunOnce("alice", "k", "fp1", run).ok());
  auto reuse = registry.RunOnce("alice", "k", "fp2", run);
  EXPECT_EQ(base::ApiCode(reuse.status()), "IDEMPOTENCY_KEY_REUSE");
  EXPECT_EQ(base::HttpStatusFor(reuse.status()), 409);
  auto bob = registry.RunOnce("bob", "k", "fp2", run);
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->output, "2");
  // Owner and key cannot be shifted into each other.
  auto shifted = registry.RunOnce("alicek", "", "fp1", run);
  ASSERT_TRUE(shifted.ok());
  EXPECT_EQ(shifted->output, "3");
}

TEST(CodexAttach, AFailedAttemptIsForgottenSoARetryRuns) {
  Clock clock;
  CodexAttachRegistry registry(clock.fn());
  int runs = 0;
  auto run = [&]() -> absl::StatusOr<CodexRunResult> {
    if (++runs == 1) return absl::ResourceExhaustedError("busy");
    return Result("second");
  };
  EXPECT_FALSE(registry.RunOnce("alice", "k", "fp", run).ok());
  auto retry = registry.RunOnce("alice", "k", "fp", run);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->output, "second");
}

TEST(CodexAttach, ResultsAreKeptFifteenMinutesThenForgotten) {
  Clock clock;
  CodexAttachRegistry registry(clock.fn());
  int runs = 0;
  auto run = [&] { return absl::StatusOr<CodexRunResult>(Result(std::to_string(++runs))); };
  ASSERT_TRUE(registry.RunOnce("alice", "k", "fp", run).ok());
  clock.now += 15 * 60 * 1000 - 1;
  EXPECT_EQ(registry.RunOnce("alice", "k", "fp", run)->output, "1");
  clock.now += 1;
  EXPECT_EQ(registry.RunOnce("alice", "k", "fp", run)->output, "2");
}

}  // namespace
}  // namespace aevatar::chrono
