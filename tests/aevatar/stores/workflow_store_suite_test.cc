// The WorkflowStore contract, on SQLite and PostgreSQL alike: workflows,
// runs, events and callbacks committed together, version-fenced turns, and
// the run leases replicas share the work by. Two stores opened on one
// backend stand for two replicas (or two processes on one SQLite file).
#include <algorithm>
#include <atomic>
#include <latch>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "aevatar/runtime/workflow_store.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

using Sealed = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kLeaseMs = 10'000;

RunRecord NewRun(const std::string& run_id, const std::string& owner, int64_t at_ms) {
  RunRecord run;
  run.run_id = run_id;
  run.owner = owner;
  run.workflow_id = "wf";
  run.phase = "running";
  run.state = {{"step_index", 0}, {"note", "naïve ✓"}};
  run.created_at_ms = at_ms;
  return run;
}

class WorkflowStoreSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<WorkflowStore> Open() {
    auto store = backend_->backend().OpenWorkflows();
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Creates `run_id` with a callback due at `due_ms` and one sealed value.
  void Create(WorkflowStore& store, const std::string& run_id, int64_t due_ms,
              const std::string& owner = "alice") {
    const absl::Status created =
        store.CreateRun(NewRun(run_id, owner, due_ms), {0, run_id, due_ms, "run.started", {}},
                        Callback{"cb_" + run_id, run_id, due_ms},
                        Sealed{{"ref_" + run_id, std::string("\0sealed\xff", 8)}});
    ASSERT_TRUE(created.ok()) << created;
  }

  TurnCommit Turn(const RunRecord& run, std::optional<Callback> next) {
    TurnCommit commit;
    commit.run_id = run.run_id;
    commit.expected_version = run.version;
    commit.phase = run.phase;
    commit.state = run.state;
    commit.state["step_index"] = run.state.value("step_index", 0) + 1;
    commit.events = {{0, run.run_id, 5000, "step.completed", {{"step", "first"}}}};
    commit.next_callback = std::move(next);
    return commit;
  }

  static std::set<std::string> RunIds(const std::vector<Callback>& callbacks) {
    std::set<std::string> ids;
    for (const Callback& c : callbacks) ids.insert(c.run_id);
    return ids;
  }

  std::unique_ptr<TestBackend> backend_;
  std::unique_ptr<WorkflowStore> store_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(WorkflowStoreSuite);

TEST_P(WorkflowStoreSuite, AWorkflowRoundTripsAndIsScopedToItsOwner) {
  SavedWorkflow w{"wf_1", "alice", {{"steps", {1, 2}}}, "sha256:d", nullptr, 10, nullptr};
  ASSERT_TRUE(store_->SaveWorkflow(w).ok());
  auto read = store_->GetWorkflow("alice", "wf_1");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->definition, w.definition);
  EXPECT_TRUE(read->admission_proof.is_null());
  EXPECT_TRUE(read->authorization_catalog.is_null());
  w.admission_proof = {{"route", "r"}};
  w.authorization_catalog = {{"grants", nlohmann::json::array()}};
  w.saved_at_ms = 20;
  ASSERT_TRUE(store_->SaveWorkflow(w).ok());  // binding replaces
  read = store_->GetWorkflow("alice", "wf_1");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->admission_proof, w.admission_proof);
  EXPECT_EQ(read->authorization_catalog, w.authorization_catalog);
  EXPECT_EQ(read->saved_at_ms, 20);
  EXPECT_EQ(base::ApiCode(store_->GetWorkflow("mallory", "wf_1").status()), "WORKFLOW_NOT_FOUND");
}

TEST_P(WorkflowStoreSuite, ACreatedRunHasItsEventCallbackAndSealedMaterial) {
  Create(*store_, "run_1", 1000);
  auto run = store_->GetRun("run_1");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->owner, "alice");
  EXPECT_EQ(run->version, 1);
  EXPECT_EQ(run->state["note"], "naïve ✓");
  auto events = store_->EventsAfter("run_1", 0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "run.started");
  auto callback = store_->CallbackOf("run_1");
  ASSERT_TRUE(callback.ok() && callback->has_value());
  EXPECT_EQ((*callback)->callback_id, "cb_run_1");
  EXPECT_EQ(*store_->GetSealed("ref_run_1"), std::string("\0sealed\xff", 8));
  EXPECT_EQ(base::ApiCode(store_->GetSealed("ref_none").status()), "SEALED_MATERIAL_MISSING");
  EXPECT_EQ(base::ApiCode(store_->GetRun("run_none").status()), "RUN_NOT_FOUND");
}

TEST_P(WorkflowStoreSuite, ATurnCommitsStateEventsAndCallbackOrNothing) {
  Create(*store_, "run_1", 1000);
  RunRecord run = *store_->GetRun("run_1");
  TurnCommit turn = Turn(run, Callback{"cb_2", "run_1", 7000});
  turn.sealed_puts = {{"ref_2", "sealed-2"}};
  auto version = store_->CommitTurn(turn);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, 2);
  EXPECT_EQ(store_->GetRun("run_1")->state["step_index"], 1);
  EXPECT_EQ((*store_->CallbackOf("run_1"))->callback_id, "cb_2");
  EXPECT_EQ(*store_->GetSealed("ref_2"), "sealed-2");
  const int64_t first_seq = (*store_->EventsAfter("run_1", 0))[0].seq;
  auto later = store_->EventsAfter("run_1", first_seq);
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].type, "step.completed");

  // The same turn again (a replay on a stale version): nothing is written.
  TurnCommit stale = Turn(run, std::nullopt);
  stale.sealed_puts = {{"ref_3", "sealed-3"}};
  EXPECT_TRUE(absl::IsAborted(store_->CommitTurn(stale).status()));
  EXPECT_EQ(store_->GetRun("run_1")->version, 2);
  EXPECT_EQ(store_->EventsAfter("run_1", 0)->size(), 2u);
  EXPECT_TRUE(store_->CallbackOf("run_1")->has_value());
  EXPECT_FALSE(store_->GetSealed("ref_3").ok());

  // No next callback: the run is idle or done.
  ASSERT_TRUE(store_->CommitTurn(Turn(*store_->GetRun("run_1"), std::nullopt)).ok());
  EXPECT_FALSE(store_->CallbackOf("run_1")->has_value());
}

TEST_P(WorkflowStoreSuite, ATurnDeletesSealedMaterialOnlyWhenItCommits) {
  Create(*store_, "run_1", 1000);
  RunRecord run = *store_->GetRun("run_1");
  TurnCommit put = Turn(run, Callback{"cb_2", "run_1", 7000});
  put.sealed_puts = {{"ref_2", "sealed-2"}};
  ASSERT_TRUE(store_->CommitTurn(put).ok());
  // A stale turn (the version moved on) deletes nothing.
  TurnCommit stale = Turn(run, std::nullopt);
  stale.sealed_deletes = {"ref_2", "ref_run_1"};
  EXPECT_TRUE(absl::IsAborted(store_->CommitTurn(stale).status()));
  EXPECT_EQ(*store_->GetSealed("ref_2"), "sealed-2");
  // The turn that commits deletes what it names, and only that.
  TurnCommit done = Turn(*store_->GetRun("run_1"), std::nullopt);
  done.sealed_deletes = {"ref_2", "ref_never_stored"};
  ASSERT_TRUE(store_->CommitTurn(done).ok());
  EXPECT_EQ(base::ApiCode(store_->GetSealed("ref_2").status()), "SEALED_MATERIAL_MISSING");
  EXPECT_EQ(*store_->GetSealed("ref_run_1"), std::string("\0sealed\xff", 8));
}

TEST_P(WorkflowStoreSuite, LiveAndRecentRunsOfAnOwner) {
  Create(*store_, "run_a", 100);
  Create(*store_, "run_b", 200);
  Create(*store_, "run_c", 300);
  Create(*store_, "run_other", 400, "bob");
  RunRecord done = *store_->GetRun("run_b");
  TurnCommit finish = Turn(done, std::nullopt);
  finish.phase = "succeeded";
  ASSERT_TRUE(store_->CommitTurn(finish).ok());
  EXPECT_EQ(*store_->LiveRunsOf("alice"), (std::vector<std::string>{"run_a", "run_c"}));
  EXPECT_EQ(*store_->RecentRunsOf("alice", 2), (std::vector<std::string>{"run_c", "run_b"}));
}

TEST_P(WorkflowStoreSuite, DueCallbacksAreOldestFirstAndOnlyDue) {
  Create(*store_, "run_late", 3000);
  Create(*store_, "run_early", 1000);
  Create(*store_, "run_future", 9000);
  auto due = store_->DueCallbacks(5000, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].run_id, "run_early");
  EXPECT_EQ((*due)[1].run_id, "run_late");
}

TEST_P(WorkflowStoreSuite, ALeasedRunGoesToNoOtherReplicaUntilItsLeaseExpires) {
  std::unique_ptr<WorkflowStore> other = Open();
  ASSERT_NE(other, nullptr);
  Create(*store_, "run_1", 1000);
  auto mine = store_->ClaimDueCallbacks("replica_a", 1000, kLeaseMs, 10);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(RunIds(*mine), std::set<std::string>{"run_1"});
  // Still due, but leased: another replica gets nothing, nor does its owner
  // (the run is in flight there).
  EXPECT_TRUE(other->ClaimDueCallbacks("replica_b", 2000, kLeaseMs, 10)->empty());
  EXPECT_TRUE(store_->ClaimDueCallbacks("replica_a", 2000, kLeaseMs, 10)->empty());
  // Renewed while the turn runs: it holds past the first expiry.
  EXPECT_TRUE(*store_->RenewRunLease("run_1", "replica_a", 8000, kLeaseMs));
  EXPECT_TRUE(other->ClaimDueCallbacks("replica_b", 12'500, kLeaseMs, 10)->empty());
  // Unrenewed (replica_a died): replica_b takes it over once it expires.
  auto taken = other->ClaimDueCallbacks("replica_b", 18'000, kLeaseMs, 10);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(RunIds(*taken), std::set<std::string>{"run_1"});
  EXPECT_FALSE(*store_->RenewRunLease("run_1", "replica_a", 18'001, kLeaseMs));
  // A stale release by the old owner leaves the new lease alone.
  ASSERT_TRUE(store_->ReleaseRunLease("run_1", "replica_a").ok());
  EXPECT_TRUE(store_->ClaimDueCallbacks("replica_a", 18'002, kLeaseMs, 10)->empty());
  // Released by its holder: any replica may claim it at once.
  ASSERT_TRUE(other->ReleaseRunLease("run_1", "replica_b").ok());
  EXPECT_EQ(store_->ClaimDueCallbacks("replica_a", 18'003, kLeaseMs, 10)->size(), 1u);
}

TEST_P(WorkflowStoreSuite, ATurnCommitGivesUpItsReplicasLeaseWithItsWrite) {
  std::unique_ptr<WorkflowStore> other = Open();
  Create(*store_, "run_1", 1000);
  ASSERT_EQ(store_->ClaimDueCallbacks("replica_a", 1000, kLeaseMs, 10)->size(), 1u);
  // Given up by another replica's id: the lease stays replica_a's.
  TurnCommit foreign = Turn(*store_->GetRun("run_1"), Callback{"cb_2", "run_1", 2000});
  foreign.release_lease_of = "replica_b";
  ASSERT_TRUE(store_->CommitTurn(foreign).ok());
  EXPECT_TRUE(other->ClaimDueCallbacks("replica_b", 2000, kLeaseMs, 10)->empty());
  // Given up by its holder: the next callback goes to any replica once due,
  // with no release of its own.
  TurnCommit last = Turn(*store_->GetRun("run_1"), Callback{"cb_3", "run_1", 3000});
  last.release_lease_of = "replica_a";
  ASSERT_TRUE(store_->CommitTurn(last).ok());
  // A renewal that races the commit finds the lease free: not taken, and
  // it stays free.
  EXPECT_TRUE(*store_->RenewRunLease("run_1", "replica_a", 2500, kLeaseMs));
  auto taken = other->ClaimDueCallbacks("replica_b", 3000, kLeaseMs, 10);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(RunIds(*taken), std::set<std::string>{"run_1"});
  EXPECT_FALSE(*store_->RenewRunLease("run_1", "replica_a", 3001, kLeaseMs));
  // A stale turn (fenced by the version) gives up nothing.
  TurnCommit stale = last;
  ASSERT_TRUE(absl::IsAborted(store_->CommitTurn(stale).status()));
  EXPECT_TRUE(*other->RenewRunLease("run_1", "replica_b", 3002, kLeaseMs));
}

TEST_P(WorkflowStoreSuite, ARestartedReplicaFreesTheLeasesItsIdHeld) {
  Create(*store_, "run_1", 1000);
  Create(*store_, "run_2", 1001);
  ASSERT_EQ(RunIds(*store_->ClaimDueCallbacks("replica_a", 1000, kLeaseMs, 10)),
            std::set<std::string>{"run_1"});
  ASSERT_EQ(RunIds(*store_->ClaimDueCallbacks("replica_b", 1001, kLeaseMs, 10)),
            std::set<std::string>{"run_2"});
  // replica_a starts again: its run is free at once, replica_b's is not.
  std::unique_ptr<WorkflowStore> restarted = Open();
  EXPECT_EQ(restarted->ReleaseLeasesOf("replica_a").value_or(-1), 1);
  EXPECT_EQ(RunIds(*restarted->ClaimDueCallbacks("replica_a", 1002, kLeaseMs, 10)),
            std::set<std::string>{"run_1"});
}

TEST_P(WorkflowStoreSuite, ACallbackNotYetDueIsNotClaimed) {
  Create(*store_, "run_1", 5000);
  EXPECT_TRUE(store_->ClaimDueCallbacks("replica_a", 4999, kLeaseMs, 10)->empty());
  // Not leased by that look: another replica claims it when due.
  std::unique_ptr<WorkflowStore> other = Open();
  EXPECT_EQ(other->ClaimDueCallbacks("replica_b", 5000, kLeaseMs, 10)->size(), 1u);
}

TEST_P(WorkflowStoreSuite, ReplicasClaimingAtOnceShareTheRunsWithoutOverlap) {
  constexpr int kRuns = 24;
  constexpr int kReplicas = 4;
  for (int i = 0; i < kRuns; ++i) Create(*store_, "run_" + std::to_string(i), 1000 + i);
  std::vector<std::unique_ptr<WorkflowStore>> stores;
  for (int r = 0; r < kReplicas; ++r) stores.push_back(Open());
  std::vector<std::vector<Callback>> claimed(kReplicas);
  std::atomic<int> failures{0};
  std::latch start(kReplicas);
  std::vector<std::thread> threads;
  for (int r = 0; r < kReplicas; ++r) {
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      // Small batches, repeated, so the claimers interleave.
      for (int round = 0; round < kRuns; ++round) {
        auto got = stores[r]->ClaimDueCallbacks("replica_" + std::to_string(r), 5000, kLeaseMs, 2);
        if (!got.ok()) {
          ++failures;
          continue;
        }
        claimed[r].insert(claimed[r].end(), got->begin(), got->end());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::multiset<std::string> all;
  std::set<std::string> distinct;
  for (int r = 0; r < kReplicas; ++r) {
    for (const Callback& c : claimed[r]) {
      all.insert(c.run_id);
      distinct.insert(c.run_id);
    }
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kRuns));
  for (const std::string& id : distinct) EXPECT_EQ(all.count(id), 1u) << id;  // claimed once
}

TEST_P(WorkflowStoreSuite, OfTwoReplicasCommittingOneTurnOnlyOneWins) {
  Create(*store_, "run_1", 1000);
  std::unique_ptr<WorkflowStore> other = Open();
  const RunRecord run = *store_->GetRun("run_1");
  std::atomic<int> won{0}, aborted{0};
  std::latch start(2);
  std::vector<std::thread> threads;
  for (WorkflowStore* s : {store_.get(), other.get()}) {
    threads.emplace_back([&, s] {
      start.arrive_and_wait();
      auto committed = s->CommitTurn(Turn(run, Callback{"cb_next", "run_1", 9000}));
      if (committed.ok()) ++won;
      if (absl::IsAborted(committed.status())) ++aborted;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(aborted.load(), 1);
  EXPECT_EQ(store_->GetRun("run_1")->version, 2);
  EXPECT_EQ(store_->EventsAfter("run_1", 0)->size(), 2u);  // run.started + one turn's event
}

}  // namespace
}  // namespace aevatar::orchestrator
