// The OperationStore contract, continued: leases on running operations (the
// runner's heartbeat, its cancel flags, and settling the runs of a runner
// that stopped renewing). Instantiated with the rest of OperationStoreSuite.
#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "operation_store_suite.h"

namespace aevatar::chrono {
namespace {

using S = OperationStatus;
constexpr int64_t kL = kTestLeaseMs;

TEST_P(OperationStoreSuite, RenewingExtendsOnlyTheRunnersOwnRunningLeases) {
  Create(NewOperation("op_1", "o", "k1", 1));
  Create(NewOperation("op_2", "o", "k2", 2));
  const Operation mine = Claim("r1", 100);
  const Operation theirs = Claim("r2", 100);
  absl::StatusOr<std::vector<LeaseRenewal>> renewed =
      store_->RenewLeases("r1", {"op_1", "op_2", "op_unknown"}, 500, kL);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  ASSERT_EQ(renewed->size(), 1u);
  EXPECT_EQ((*renewed)[0].id, "op_1");
  EXPECT_FALSE((*renewed)[0].cancel_requested);
  Operation expected = mine;
  expected.lease_expires_at_ms = 500 + kL;  // and nothing else: version, times stay
  ExpectSameOperation(*store_->Get("op_1"), expected);
  ExpectSameOperation(*store_->Get("op_2"), theirs);
  EXPECT_TRUE(store_->RenewLeases("r1", {}, 600, kL)->empty());
  EXPECT_EQ(store_->RenewLeases("", {"op_1"}, 600, kL).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->RenewLeases("r1", {"op_1"}, 600, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ClaimNext("r1", 600, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(OperationStoreSuite, RenewingReportsCancelRequestsAndLeavesOutFinishedRuns) {
  for (int i = 0; i < 3; ++i)
    Create(NewOperation(absl::StrCat("op_", i), "o", std::to_string(i), i));
  Claim("r", 10);  // op_0: a cancel arrives (from any replica)
  Claim("r", 10);  // op_1: keeps running
  Claim("r", 10);  // op_2: finished
  ASSERT_TRUE(store_->RequestCancel("op_0", 20).ok());
  ASSERT_TRUE(store_->Finish("op_2", S::kSucceeded, "{}", 20).ok());
  absl::StatusOr<std::vector<LeaseRenewal>> renewed =
      store_->RenewLeases("r", {"op_0", "op_1", "op_2"}, 30, kL);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  ASSERT_EQ(renewed->size(), 2u);
  EXPECT_EQ((*renewed)[0].id, "op_0");
  EXPECT_TRUE((*renewed)[0].cancel_requested);
  EXPECT_EQ((*renewed)[1].id, "op_1");
  EXPECT_FALSE((*renewed)[1].cancel_requested);
  EXPECT_EQ(store_->Get("op_2")->lease_expires_at_ms, 0);  // terminal: no lease
}

TEST_P(OperationStoreSuite, ALapsedLeaseIsSettledUncertainOnceAndNeverRunsAgain) {
  Create(NewOperation("op_dead", "o", "k1", 1));
  Create(NewOperation("op_live", "o", "k2", 2));
  Create(NewOperation("op_done", "o", "k3", 3));
  Create(NewOperation("op_queued", "o", "k4", 4));
  Claim("dead", 0);
  Claim("live", 0);
  Claim("live", 0);
  const Operation done = *store_->Finish("op_done", S::kSucceeded, "{}", 5);
  ASSERT_EQ(store_->RenewLeases("live", {"op_live"}, 50, kL)->size(), 1u);
  const Operation queued = *store_->Get("op_queued");

  EXPECT_EQ(store_->SettleExpiredLeases(kL - 1).value_or(-1), 0);  // not yet
  absl::StatusOr<int> settled = store_->SettleExpiredLeases(kL);
  ASSERT_TRUE(settled.ok()) << settled.status();
  EXPECT_EQ(*settled, 1);
  const Operation uncertain = *store_->Get("op_dead");
  EXPECT_EQ(uncertain.status, S::kOutcomeUncertain);
  EXPECT_EQ(uncertain.finished_at_ms, kL);
  EXPECT_EQ(uncertain.version, 3);
  EXPECT_EQ(uncertain.request, "");
  EXPECT_EQ(uncertain.sealed_credentials, "");
  EXPECT_EQ(uncertain.lease_expires_at_ms, 0);
  EXPECT_EQ(uncertain.claimed_by, "dead");  // who ran it, for the operator
  EXPECT_EQ(store_->Get("op_live")->status, S::kRunning);
  ExpectSameOperation(*store_->Get("op_done"), done);
  ExpectSameOperation(*store_->Get("op_queued"), queued);
  EXPECT_EQ(store_->SettleExpiredLeases(kL).value_or(-1), 0);  // settled once

  // The dead runner, were it only slow, learns its run is no longer its own
  // and cannot record a result over the settlement.
  EXPECT_TRUE(store_->RenewLeases("dead", {"op_dead"}, kL + 1, kL)->empty());
  EXPECT_EQ(store_->Finish("op_dead", S::kSucceeded, "{}", kL + 1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Never re-run: the next claim is the queued operation.
  EXPECT_EQ(Claim("live", kL + 2).id, "op_queued");
  EXPECT_EQ(store_->SettleExpiredLeases(50 + kL).value_or(-1), 1);  // op_live lapsed too
}

TEST_P(OperationStoreSuite, ConcurrentSettlersSettleEachRunExactlyOnce) {
  constexpr int kOps = 20;
  constexpr int kSettlers = 4;
  for (int i = 0; i < kOps; ++i)
    Create(NewOperation(absl::StrCat("op_", i), "o", std::to_string(i), i));
  for (int i = 0; i < kOps; ++i) Claim("dead", 0);
  std::atomic<int> total{0};
  std::latch start(kSettlers);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSettlers; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      absl::StatusOr<int> settled = store_->SettleExpiredLeases(kL);
      EXPECT_TRUE(settled.ok()) << settled.status();
      total += settled.value_or(0);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(total.load(), kOps);
  EXPECT_EQ(*store_->CountWithStatus(S::kOutcomeUncertain), kOps);
  for (int i = 0; i < kOps; ++i) EXPECT_EQ(store_->Get(absl::StrCat("op_", i))->version, 3) << i;
}

}  // namespace
}  // namespace aevatar::chrono
