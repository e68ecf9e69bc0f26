#include "chrono/codex/codex_run_cancels.h"

#include <poll.h>

#include <string>
#include <thread>
#include <vector>

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::chrono {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(CodexRunCancels, OnlyTheOwnersCancelReachesTheRun) {
  CodexRunCancels cancels;
  auto run = cancels.Register("alice", "run_1");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(Readable(run->cancel_fd()));

  for (const auto& [owner, id] : std::vector<std::pair<std::string, std::string>>{
           {"bob", "run_1"}, {"alice", "run_2"}, {"alice", "run_1/x"}, {"alice", ""}}) {
    absl::Status st = cancels.Cancel(owner, id);
    EXPECT_EQ(base::ApiCode(st), "CODEX_RUN_NOT_FOUND") << owner << " " << id;
    EXPECT_EQ(base::HttpStatusFor(st), 404);
  }
  EXPECT_FALSE(Readable(run->cancel_fd()));
  EXPECT_TRUE(cancels.Cancel("alice", "run_1").ok());
  EXPECT_TRUE(Readable(run->cancel_fd()));
}

TEST(CodexRunCancels, AnIdIsOneRunPerOwnerAndFreedWhenTheRunEnds) {
  CodexRunCancels cancels;
  {
    auto first = cancels.Register("alice", "run_1");
    ASSERT_TRUE(first.ok());
    auto again = cancels.Register("alice", "run_1");
    EXPECT_EQ(base::ApiCode(again.status()), "CODEX_RUN_ID_IN_USE");
    EXPECT_EQ(base::HttpStatusFor(again.status()), 409);
    auto bobs = cancels.Register("bob", "run_1");  // another owner's namespace
    EXPECT_TRUE(bobs.ok());
    EXPECT_EQ(cancels.size(), 2u);
  }
  EXPECT_EQ(cancels.size(), 0u);
  EXPECT_EQ(base::ApiCode(cancels.Cancel("alice", "run_1")), "CODEX_RUN_NOT_FOUND");
  EXPECT_TRUE(cancels.Register("alice", "run_1").ok());
}

// Runs start, get cancelled and end concurrently (a TSAN case).
TEST(CodexRunCancels, ConcurrentRegisterCancelAndEndAreSafe) {
  CodexRunCancels cancels;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cancels, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string id = "run_" + std::to_string(i % 3);
        auto run = cancels.Register("owner" + std::to_string(t), id);
        if (run.ok() && cancels.Cancel("owner" + std::to_string(t), id).ok()) {
          EXPECT_TRUE(Readable(run->cancel_fd()));
        }
        (void)cancels.Cancel("owner" + std::to_string((t + 1) % 4), id);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(cancels.size(), 0u);
}

}  // namespace
}  // namespace aevatar::chrono
