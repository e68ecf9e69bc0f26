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

TEST(McpSessions, TheOldestSessionMakesRoomAndItsCallsAreCancelled) {
  McpSessions sessions(2);
  const std::string first = sessions.Open("u", "v");
  auto call = sessions.Begin(first, "1");
  const std::string second = sessions.Open("u", "v");
  sessions.Open("u", "v");
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_FALSE(sessions.Find(first, "u").ok());
  EXPECT_TRUE(sessions.Find(second, "u").ok());
  EXPECT_TRUE(call->cancelled.HasBeenNotified());
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
