#include "aevatar/mcp/mcp_sessions.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace aevatar::orchestrator {
namespace {

TEST(McpSessions, ASessionBelongsToItsCaller) {
  McpSessions sessions;
  const std::string id = sessions.Open("user_a", "2025-06-18");
  EXPECT_EQ(*sessions.Find(id, "user_a"), "2025-06-18");
  EXPECT_FALSE(sessions.Find(id, "user_b").ok());
  EXPECT_FALSE(sessions.Close(id, "user_b").ok());
  EXPECT_TRUE(sessions.Close(id, "user_a").ok());
  EXPECT_FALSE(sessions.Find(id, "user_a").ok());
}

TEST(McpSessions, CancelReachesOnlyTheNamedCallOfTheOwner) {
  McpSessions sessions;
  const std::string id = sessions.Open("user_a", "2025-06-18");
  auto one = sessions.Begin(id, "1");
  auto two = sessions.Begin(id, "2");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(sessions.Begin(id, "1"), nullptr);  // the same id twice in flight
  EXPECT_FALSE(sessions.Cancel(id, "user_b", "1"));
  EXPECT_TRUE(sessions.Cancel(id, "user_a", "1"));
  EXPECT_TRUE(one->cancelled.HasBeenNotified());
  EXPECT_FALSE(two->cancelled.HasBeenNotified());
  sessions.End(id, "1");
  EXPECT_FALSE(sessions.Cancel(id, "user_a", "1"));
  // Closing the session cancels what is left.
  EXPECT_TRUE(sessions.Close(id, "user_a").ok());
  EXPECT_TRUE(two->cancelled.HasBeenNotified());
}

TEST(McpSessions, ACallerAtItsCapLosesItsOwnOldestSession) {
  McpSessions sessions(/*max_sessions=*/100, /*max_per_user=*/2);
  const std::string first = sessions.Open("a", "v");
  auto call = sessions.Begin(first, "1");
  const std::string second = sessions.Open("a", "v");
  const std::string other = sessions.Open("b", "v");
  sessions.Open("a", "v");
  EXPECT_FALSE(sessions.Find(first, "a").ok());
  EXPECT_TRUE(call->cancelled.HasBeenNotified());
  EXPECT_TRUE(sessions.Find(second, "a").ok());
  EXPECT_TRUE(sessions.Find(other, "b").ok());
}

TEST(McpSessions, OneCallersFloodLeavesAnothersSessionAndCallAlive) {
  McpSessions sessions(/*max_sessions=*/8, /*max_per_user=*/4);
  const std::string mine = sessions.Open("a", "v");
  auto call = sessions.Begin(mine, "1");
  for (int i = 0; i < 1000; ++i) sessions.Open("b", "v");
  EXPECT_TRUE(sessions.Find(mine, "a").ok());
  EXPECT_FALSE(call->cancelled.HasBeenNotified());
  EXPECT_EQ(sessions.size(), 5u);
}

TEST(McpSessions, AFullProcessDropsIdleSessionsBeforeBusyOnes) {
  McpSessions sessions(/*max_sessions=*/2);
  const std::string busy = sessions.Open("a", "v");
  auto call = sessions.Begin(busy, "1");
  const std::string idle = sessions.Open("b", "v");
  EXPECT_TRUE(sessions.Find(idle, "b").ok());  // used after `busy`, still idle
  sessions.Open("c", "v");
  EXPECT_TRUE(sessions.Find(busy, "a").ok());
  EXPECT_FALSE(call->cancelled.HasBeenNotified());
  EXPECT_FALSE(sessions.Find(idle, "b").ok());
}

TEST(McpSessions, WhenEverySessionIsBusyTheOpenerGivesUpItsOwnOnATie) {
  McpSessions sessions(/*max_sessions=*/2);
  const std::string a = sessions.Open("a", "v");
  auto a_call = sessions.Begin(a, "1");
  const std::string b = sessions.Open("b", "v");
  auto b_call = sessions.Begin(b, "1");
  sessions.Open("b", "v");
  EXPECT_TRUE(sessions.Find(a, "a").ok());
  EXPECT_FALSE(a_call->cancelled.HasBeenNotified());
  EXPECT_TRUE(b_call->cancelled.HasBeenNotified());
}

TEST(McpSessions, SessionsIdlePastTheTtlAllGoWhenRoomIsNeeded) {
  absl::Time now = absl::FromUnixSeconds(1'000'000);
  McpSessions sessions(/*max_sessions=*/3, /*max_per_user=*/32, absl::Hours(1),
                       [&] { return now; });
  const std::string old_one = sessions.Open("a", "v");
  const std::string old_two = sessions.Open("b", "v");
  now += absl::Hours(2);
  const std::string fresh = sessions.Open("c", "v");
  sessions.Open("d", "v");
  // Least-recently-used alone would have dropped old_one only.
  EXPECT_FALSE(sessions.Find(old_one, "a").ok());
  EXPECT_FALSE(sessions.Find(old_two, "b").ok());
  EXPECT_TRUE(sessions.Find(fresh, "c").ok());
  EXPECT_EQ(sessions.size(), 2u);
}

TEST(McpSessions, ConcurrentCallsAndCancelsAreSafe) {
  McpSessions sessions;
  const std::string id = sessions.Open("u", "v");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string key = std::to_string(t * 1000 + i);
        auto call = sessions.Begin(id, key);
        ASSERT_NE(call, nullptr);
        sessions.Cancel(id, "u", key);
        EXPECT_TRUE(call->cancelled.HasBeenNotified());
        sessions.End(id, key);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(sessions.Find(id, "u").ok());
}

}  // namespace
}  // namespace aevatar::orchestrator
