// The OperationStore contract, continued: an owner's listing (GET
// /executions) — only the owner's operations, newest first, filtered by
// status, paged by a keyset position, and without what retention ended.
// Instantiated with the rest of OperationStoreSuite.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "operation_store_suite.h"

namespace aevatar::chrono {
namespace {

using S = OperationStatus;
using Ids = std::vector<std::string>;

OperationListQuery OpsQuery(const std::string& owner, int64_t now_ms,
                            std::optional<OperationStatus> status = std::nullopt, int limit = 50) {
  OperationListQuery query;
  query.owner = owner;
  query.now_ms = now_ms;
  query.status = status;
  query.limit = limit;
  return query;
}

Ids ListedIds(OperationStore& store, const OperationListQuery& query) {
  absl::StatusOr<std::vector<Operation>> ops = store.ListOwned(query);
  EXPECT_TRUE(ops.ok()) << ops.status();
  Ids ids;
  if (ops.ok()) {
    for (const Operation& op : *ops) ids.push_back(op.id);
  }
  return ids;
}

TEST_P(OperationStoreSuite, ListingHoldsOnlyTheOwnersOperationsNewestFirst) {
  Create(NewOperation("op_a1", "alice", "k1", 100));
  Create(NewOperation("op_a2", "alice", "k2", 300));
  Create(NewOperation("op_b1", "bob", "k1", 200));
  Create(NewOperation("op_a3", "alice", "k3", 200));
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 400)), (Ids{"op_a2", "op_a3", "op_a1"}));
  EXPECT_EQ(ListedIds(*store_, OpsQuery("bob", 400)), (Ids{"op_b1"}));
  EXPECT_TRUE(ListedIds(*store_, OpsQuery("carol", 400)).empty());
}

TEST_P(OperationStoreSuite, ListingFiltersByStatus) {
  Create(NewOperation("op_1", "alice", "k1", 1));
  Create(NewOperation("op_2", "alice", "k2", 2));
  Create(NewOperation("op_3", "alice", "k3", 3));
  Claim("r", 10);  // op_1
  Claim("r", 10);  // op_2
  ASSERT_TRUE(store_->Finish("op_2", S::kFailed, "{}", 20).ok());
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 30, S::kQueued)), (Ids{"op_3"}));
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 30, S::kRunning)), (Ids{"op_1"}));
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 30, S::kFailed)), (Ids{"op_2"}));
  EXPECT_TRUE(ListedIds(*store_, OpsQuery("alice", 30, S::kSucceeded)).empty());
}

TEST_P(OperationStoreSuite, ListingPagesFollowTheCursor) {
  for (int i = 0; i < 5; ++i) {
    // Two operations per millisecond: the id breaks the tie.
    Create(NewOperation(absl::StrCat("op_", i), "alice", absl::StrCat("k", i), 100 + i / 2));
  }
  Ids seen;
  OperationListQuery query = OpsQuery("alice", 200, std::nullopt, 2);
  for (int page = 0; page < 10; ++page) {
    absl::StatusOr<std::vector<Operation>> ops = store_->ListOwned(query);
    ASSERT_TRUE(ops.ok()) << ops.status();
    for (const Operation& op : *ops) seen.push_back(op.id);
    if (ops->size() < 2) break;
    query.after = base::PagePosition{ops->back().created_at_ms, ops->back().id};
  }
  EXPECT_EQ(seen, (Ids{"op_4", "op_3", "op_2", "op_1", "op_0"}));
}

TEST_P(OperationStoreSuite, ListingLeavesOutWhatRetentionEnded) {
  Create(NewOperation("op_old", "alice", "k1", 1));  // expires at 100001
  Create(NewOperation("op_new", "alice", "k2", 50000));
  Claim("r", 10);  // op_old
  ASSERT_TRUE(store_->Finish("op_old", S::kSucceeded, "{}", 20).ok());
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 100000)), (Ids{"op_new", "op_old"}));
  // Past its retention, before and after the sweep made it a tombstone.
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 100001)), (Ids{"op_new"}));
  ASSERT_TRUE(store_->ExpireOld(100001, 1000000).ok());
  EXPECT_EQ(ListedIds(*store_, OpsQuery("alice", 100001)), (Ids{"op_new"}));
}

}  // namespace
}  // namespace aevatar::chrono
