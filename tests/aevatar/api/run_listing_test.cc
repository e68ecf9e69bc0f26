// GET /api/workflow-runs' query parameters and Last-Event-ID: what is
// accepted, and the typed 400 for everything else.
#include "aevatar/api/run_listing.h"

#include "base/api_error.h"
#include "base/page_cursor.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

std::string CodeOf(const absl::Status& status) { return base::ApiCode(status); }

TEST(RunListing, DefaultsAskForOneMoreThanThePage) {
  auto query = RunListQueryOf("alice", std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->owner, "alice");
  EXPECT_EQ(query->phase, "");
  EXPECT_EQ(query->workflow_id, "");
  EXPECT_EQ(query->limit, kDefaultRunPage + 1);
  EXPECT_FALSE(query->after.has_value());
}

TEST(RunListing, FiltersAndCursorReachTheQuery) {
  const std::string cursor = EncodeRunCursor({42, "run_x"});
  auto query = RunListQueryOf("alice", "failed", "build", "7", cursor);
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->phase, "failed");
  EXPECT_EQ(query->workflow_id, "build");
  EXPECT_EQ(query->limit, 8);
  ASSERT_TRUE(query->after.has_value());
  EXPECT_EQ(query->after->created_at_ms, 42);
  EXPECT_EQ(query->after->run_id, "run_x");
}

TEST(RunListing, ForeignCursorIsInvalidCursor) {
  auto query = RunListQueryOf("alice", std::nullopt, std::nullopt, std::nullopt, "r1:bogus");
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(CodeOf(query.status()), "INVALID_CURSOR");
}

TEST(RunListing, BadLimitIsInvalidLimit) {
  for (const char* limit : {"0", "-1", "101", "ten", "5x", ""}) {
    auto query = RunListQueryOf("alice", std::nullopt, std::nullopt, limit, std::nullopt);
    ASSERT_FALSE(query.ok()) << limit;
    EXPECT_EQ(CodeOf(query.status()), "INVALID_LIMIT") << limit;
  }
}

TEST(RunListing, UnknownStatusIsInvalidStatus) {
  auto query = RunListQueryOf("alice", "done", std::nullopt, std::nullopt, std::nullopt);
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(CodeOf(query.status()), "INVALID_STATUS");
}

TEST(RunListing, LastEventIdIsASequenceNumber) {
  EXPECT_EQ(*LastEventIdOf(std::nullopt), 0);
  EXPECT_EQ(*LastEventIdOf(""), 0);
  EXPECT_EQ(*LastEventIdOf("17"), 17);
  for (const char* bad : {"-1", "abc", "1.5", "99999999999999999999"}) {
    auto id = LastEventIdOf(std::string(bad));
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(CodeOf(id.status()), "INVALID_LAST_EVENT_ID") << bad;
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
