// Leases seen through the executor: two executors (two runners) on one
// SQLite store, each with its lease keeper ticking fast, a FakeRunner and a
// FakeClock. A cancel accepted by one runner reaches the run on the other; a
// runner that stops renewing has its runs settled by a live one; a run whose
// lease was lost is stopped.
#include <string>

#include "chrono_harness.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

using ::aevatar::testing::PollUntil;
using S = OperationStatus;

constexpr int64_t kLeaseMs = 60 * 1000;

ExecutorOptions FastLeases(const std::string& runner_id) {
  ExecutorOptions options = ChronoHarness::DefaultOptions();
  options.runner_id = runner_id;
  options.lease_ms = kLeaseMs;
  options.lease_tick = absl::Milliseconds(20);
  return options;
}

Operation QueuedBash(const std::string& id, int64_t now_ms) {
  return NewBashOperation(id, id, now_ms, "sleep 1000");
}

S StatusOf(OperationStore& store, const std::string& id) {
  absl::StatusOr<Operation> op = store.Get(id);
  return op.ok() ? op->status : S::kQueued;
}

TEST(ExecutorLeases, ACancelAcceptedByAnotherRunnerStopsTheRun) {
  ChronoHarness a(FastLeases("runner-a"));
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(a.executor().Submit(QueuedBash("op_1", a.clock().Now())).ok());
  ASSERT_TRUE(a.runner().WaitStarted(1));  // running on a, held by a's FakeRunner
  ChronoHarness b(FastLeases("runner-b"));
  ASSERT_TRUE(b.Start(&a.store()).ok());  // b shares a's store

  const http::Response cancel = b.Call("POST", "/executions/op_1/cancel");
  ASSERT_EQ(cancel.status, 200) << cancel.body;
  EXPECT_EQ(BodyOf(cancel)["status"], "running");  // b only flagged it
  ASSERT_TRUE(PollUntil([&] { return StatusOf(a.store(), "op_1") == S::kCancelled; }));
  EXPECT_EQ(a.store().Get("op_1")->claimed_by, "runner-a");
  EXPECT_EQ(b.runner().started(), 0);
}

TEST(ExecutorLeases, ARunnerThatStopsRenewingHasItsRunSettledAndLiveRunsStay) {
  ChronoHarness live(FastLeases("runner-live"));
  ASSERT_TRUE(live.Start().ok());
  OperationStore& store = live.store();
  // A dead runner's claim, taken just now and never renewed.
  ASSERT_TRUE(store.CreateOrGet(QueuedBash("op_dead", live.clock().Now())).ok());
  ASSERT_EQ(store.ClaimNext("runner-dead", live.clock().Now(), kLeaseMs).value()->id, "op_dead");
  ASSERT_TRUE(live.executor().Submit(QueuedBash("op_live", live.clock().Now() + 1)).ok());
  ASSERT_TRUE(live.runner().WaitStarted(1));

  // Time passes in quarter leases; after each the live runner has renewed its own.
  for (int step = 0; step < 6; ++step) {
    live.clock().Advance(kLeaseMs / 4);
    ASSERT_TRUE(PollUntil([&] {
      return store.Get("op_live")->lease_expires_at_ms == live.clock().Now() + kLeaseMs;
    })) << step;
  }
  const Operation dead = *store.Get("op_dead");
  EXPECT_EQ(dead.status, S::kOutcomeUncertain);
  EXPECT_EQ(dead.claimed_by, "runner-dead");
  EXPECT_EQ(StatusOf(store, "op_live"), S::kRunning);
  EXPECT_EQ(live.runner().started(), 1);  // the dead runner's operation never runs again
}

TEST(ExecutorLeases, ARunWhoseLeaseWasSettledElsewhereIsStopped) {
  ChronoHarness h(FastLeases("runner-slow"));
  ASSERT_TRUE(h.Start().ok());
  ASSERT_TRUE(h.executor().Submit(QueuedBash("op_1", h.clock().Now())).ok());
  ASSERT_TRUE(h.runner().WaitStarted(1));
  ASSERT_TRUE(PollUntil([&] { return h.executor().running() == 1; }));
  // Another runner, its clock past the lease (this one could not renew), settles it.
  ASSERT_EQ(h.store().SettleExpiredLeases(h.clock().Now() + 2 * kLeaseMs).value_or(0), 1);
  ASSERT_TRUE(PollUntil([&] { return h.executor().running() == 0; }));  // the run was killed
  EXPECT_EQ(StatusOf(h.store(), "op_1"), S::kOutcomeUncertain);         // and not overwritten
}

}  // namespace
}  // namespace aevatar::chrono
