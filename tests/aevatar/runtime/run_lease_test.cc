// Run leases in the runtime: a run leased by a replica that died is left
// alone until the lease expires, then taken over; a turn whose replica died
// after its exchange but before its commit is replayed with the same
// idempotency key. Two runtimes on one store stand for two replicas.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "runtime_fixture.h"

namespace aevatar::orchestrator {
namespace {

constexpr int64_t kDefaultLeaseMs = 15'000;

// The store as a replica sees it until `Die()`: from then on its commits
// fail and its leases are never released (the process is gone); reads pass.
// Counts the callbacks it hands out in claims, the leases released, the
// turns committed, the callbacks read back and the definitions unsealed.
class DyingStore final : public WorkflowStore {
 public:
  explicit DyingStore(WorkflowStore* inner) : inner_(inner) {}
  void Die() { dead_ = true; }
  int claimed() const { return claimed_; }
  int released() const { return released_; }
  int released_with_commits() const { return released_with_commits_; }
  int commits() const { return commits_; }
  int callbacks_read() const { return callbacks_read_; }
  int definitions_read() const { return definitions_read_; }
  // Called before each commit; a true return kills the replica first.
  std::function<bool()> die_before_commit;
  // Called after each commit that went through.
  std::function<void(const TurnCommit&)> after_commit;

  absl::Status SaveWorkflow(const SavedWorkflow& w) override { return inner_->SaveWorkflow(w); }
  absl::StatusOr<SavedWorkflow> GetWorkflow(const std::string& o, const std::string& w) override {
    return inner_->GetWorkflow(o, w);
  }
  absl::Status CreateRun(const RunRecord& run, const RunEvent& event, const Callback& callback,
                         const std::vector<std::pair<std::string, std::string>>& sealed) override {
    return inner_->CreateRun(run, event, callback, sealed);
  }
  absl::StatusOr<RunRecord> GetRun(const std::string& id) override { return inner_->GetRun(id); }
  absl::StatusOr<std::vector<std::string>> LiveRunsOf(const std::string& o) override {
    return inner_->LiveRunsOf(o);
  }
  absl::StatusOr<std::vector<std::string>> RecentRunsOf(const std::string& o, int n) override {
    return inner_->RecentRunsOf(o, n);
  }
  absl::StatusOr<std::vector<RunRecord>> ListRuns(const RunListQuery& q) override {
    return inner_->ListRuns(q);
  }
  absl::StatusOr<int64_t> CommitTurn(const TurnCommit& commit) override {
    if (!dead_ && die_before_commit && die_before_commit()) Die();
    if (dead_) return absl::UnavailableError("the replica died");
    ++commits_;
    if (!commit.release_lease_of.empty()) ++released_with_commits_;
    auto committed = inner_->CommitTurn(commit);
    if (committed.ok() && after_commit) after_commit(commit);
    return committed;
  }
  absl::StatusOr<std::vector<RunEvent>> EventsAfter(const std::string& id, int64_t s) override {
    return inner_->EventsAfter(id, s);
  }
  absl::StatusOr<std::vector<Callback>> DueCallbacks(int64_t now, int limit) override {
    return inner_->DueCallbacks(now, limit);
  }
  absl::StatusOr<std::vector<Callback>> ClaimDueCallbacks(const std::string& replica, int64_t now,
                                                          int64_t lease, int limit) override {
    if (dead_) return std::vector<Callback>();
    auto claimed = inner_->ClaimDueCallbacks(replica, now, lease, limit);
    if (claimed.ok()) claimed_ += static_cast<int>(claimed->size());
    return claimed;
  }
  absl::StatusOr<bool> RenewRunLease(const std::string& id, const std::string& replica, int64_t now,
                                     int64_t lease) override {
    if (dead_) return false;
    return inner_->RenewRunLease(id, replica, now, lease);
  }
  absl::Status ReleaseRunLease(const std::string& id, const std::string& replica) override {
    if (dead_) return absl::OkStatus();  // nobody is left to release it
    ++released_;
    return inner_->ReleaseRunLease(id, replica);
  }
  absl::StatusOr<int> ReleaseLeasesOf(const std::string& replica) override {
    if (dead_) return 0;
    return inner_->ReleaseLeasesOf(replica);
  }
  absl::StatusOr<std::optional<Callback>> CallbackOf(const std::string& id) override {
    ++callbacks_read_;
    return inner_->CallbackOf(id);
  }
  absl::StatusOr<std::string> GetSealed(const std::string& ref) override {
    if (ref.starts_with("def_")) ++definitions_read_;  // WorkflowRuntime::CreateRun's refs
    return inner_->GetSealed(ref);
  }

 private:
  WorkflowStore* inner_;
  std::atomic<bool> dead_{false};
  std::atomic<int> claimed_{0};
  std::atomic<int> released_{0};
  std::atomic<int> released_with_commits_{0};
  std::atomic<int> commits_{0};
  std::atomic<int> callbacks_read_{0};
  std::atomic<int> definitions_read_{0};
};

class RunLeaseTest : public testing::RuntimeFixture {
 protected:
  // Makes runtime_ a replica on a DyingStore over the real store; Survive()
  // puts the real store back for the next runtime (another replica).
  DyingStore* BecomeMortal() {
    real_ = std::move(store_);
    auto dying = std::make_unique<DyingStore>(real_.get());
    DyingStore* handle = dying.get();
    store_ = std::move(dying);
    runtime_ = MakeRuntime();
    return handle;
  }
  void OtherReplicaTakesOver() {
    runtime_.reset();
    mortal_ = std::move(store_);
    store_ = std::move(real_);
    runtime_ = MakeRuntime();
  }

  // Starts a run on a replica that dies once its submit reached the
  // executor, before the receipt was committed; another replica takes over.
  std::string StartOnAReplicaThatDiesAfterItsSubmit() {
    DyingStore* mortal = BecomeMortal();
    mortal->die_before_commit = [this] { return executor_.CountOf("submit") == 1; };
    const std::string run_id = Start();
    for (int i = 0; i < 10 && executor_.CountOf("submit") == 0; ++i) {
      runtime_->DrainDueForTest();
      now_ += 1000;
    }
    EXPECT_EQ(executor_.CountOf("submit"), 1);
    OtherReplicaTakesOver();
    return run_id;
  }
  // The distinct idempotency keys of the submits the executor saw.
  std::set<std::string> SubmitKeys() const {
    std::set<std::string> keys;
    for (const testing::Exchange& e : executor_.exchanges()) {
      if (e.kind == "submit") keys.insert(e.key);
    }
    return keys;
  }

  std::unique_ptr<WorkflowStore> real_;
  std::unique_ptr<WorkflowStore> mortal_;
};

TEST_F(RunLeaseTest, ARunLeasedByADeadReplicaWaitsForTheLeaseThenIsTakenOver) {
  const std::string run_id = Start();
  // Another replica claimed the run's callback, then died.
  auto claimed = store_->ClaimDueCallbacks("replica-dead", now_, kDefaultLeaseMs, 64);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_EQ(claimed->size(), 1u);
  const int64_t expires = now_ + kDefaultLeaseMs;
  while (now_ < expires - 1000) {
    runtime_->DrainDueForTest();
    now_ += 1000;
  }
  EXPECT_EQ(executor_.exchanges().size(), 0u) << "a leased run was run by another replica";
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  EXPECT_EQ(Phase(run_id), "succeeded");
  EXPECT_EQ(executor_.CountOf("submit"), 1);
}

TEST_F(RunLeaseTest, ATurnInterruptedAfterItsExchangeIsReplayedWithTheSameKey) {
  const std::string run_id = StartOnAReplicaThatDiesAfterItsSubmit();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  // At most the one exchange repeated, under the key committed before it.
  EXPECT_EQ(executor_.CountOf("submit"), 2);
  EXPECT_EQ(SubmitKeys().size(), 1u);
  EXPECT_EQ(audit_->ForRun(run_id)->size(), 2u);  // one running, one terminal
}

TEST_F(RunLeaseTest, AStopThatWinsOverTheReceiptCommitCancelsWhatTheSubmitStarted) {
  DyingStore* store = BecomeMortal();  // never dies here: its hook stops the run
  executor_.polls_before_done = 1000;  // the program runs until it is cancelled
  std::unique_ptr<WorkflowRuntime> other = MakeRuntime();  // a second replica
  std::string run_id;
  bool stop_sent = false;
  store->die_before_commit = [&] {
    // The other replica takes a stop as this one's submit returns: the
    // receipt's commit then loses to the stop's, and of the step only the
    // dispatch before the submit is durable.
    if (executor_.CountOf("submit") == 1 && !stop_sent) {
      stop_sent = true;
      EXPECT_TRUE(other->RequestStop(run_id, "user-1").ok());
    }
    return false;
  };
  run_id = Start();
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  ASSERT_TRUE(stop_sent);
  ASSERT_EQ(Phase(run_id), "stopped");
  // The stop learned the running operation by the same key and cancelled
  // it, rather than calling it "cancelled before submit" and leaving it on.
  EXPECT_EQ(executor_.CountOf("submit"), 2);
  EXPECT_EQ(SubmitKeys().size(), 1u);
  EXPECT_EQ(executor_.CountOf("cancel"), 1);
  const nlohmann::json payload = TerminalFactOf(run_id)["tool_payload"];
  ASSERT_TRUE(payload.is_object());
  EXPECT_EQ(payload["failure"]["code"], "code_execution_cancelled");
  EXPECT_EQ(payload["mutation"]["may_have_executed"], true);
  EXPECT_EQ(payload["retryable"], false);
}

TEST_F(RunLeaseTest, AStopWhileADeadReplicaHoldsASubmittedRunIsNeverBeforeSubmit) {
  executor_.polls_before_done = 1000;
  // The dead replica's lease outlives the stop's window (15 s, 10 s).
  const std::string run_id = StartOnAReplicaThatDiesAfterItsSubmit();
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  ASSERT_EQ(Phase(run_id), "stopped");
  // Past the deadline nothing new is sent, and the program that may run is
  // said to: uncertain, not "cancelled before submit" and safe to retry.
  EXPECT_EQ(executor_.CountOf("submit"), 1);
  const nlohmann::json payload = TerminalFactOf(run_id)["tool_payload"];
  ASSERT_TRUE(payload.is_object());
  EXPECT_EQ(payload["failure"]["code"], "code_execution_cancel_outcome_uncertain");
  EXPECT_EQ(payload["mutation"]["may_have_executed"], true);
  EXPECT_EQ(payload["retryable"], false);
}

TEST_F(RunLeaseTest, TurnsScheduledForNowFollowUnderTheClaimOfTheFirst) {
  DyingStore* counted = BecomeMortal();
  const std::string run_id = Start();
  for (int tick = 0; tick < 10 && Phase(run_id) != "succeeded"; ++tick) {
    runtime_->DrainDueForTest(WorkflowRuntime::kMaxTurnsPerDelivery);  // as the workers do
    now_ += 1000;
  }
  ASSERT_EQ(Phase(run_id), "succeeded");
  // The submit and each poll (the executor double answers "running" twice)
  // wait for their time; admission and dispatch ride with the submit, and the result's
  // audit and the run's end with the last poll. One claim each, released
  // once by the delivery's last commit: four, where a claim per turn made
  // seven, and no write of their own for the releases.
  const int exchanges = EventCount(run_id, "exchange");
  EXPECT_EQ(exchanges, 4);
  EXPECT_EQ(EventCount(run_id, "audit.written"), 1);
  EXPECT_EQ(counted->claimed(), exchanges);
  EXPECT_EQ(counted->released_with_commits(), exchanges);
  EXPECT_EQ(counted->released(), 0);
  // The turn that follows is the one its predecessor committed: the store
  // is not asked again.
  EXPECT_EQ(counted->callbacks_read(), 0);
}

TEST_F(RunLeaseTest, TheAuditOfTheLastStepEndsTheRunInItsOwnCommit) {
  DyingStore* counted = BecomeMortal();
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  // Admission, the dispatch before the submit, one commit per exchange (the
  // last one freezes the audit intent), then the audit written and the run
  // ended together: no turn of its own for the end, where there used to be one.
  EXPECT_EQ(counted->commits(), 2 + EventCount(run_id, "exchange") + 1);
  EXPECT_EQ(EventCount(run_id, "audit.written"), 1);
  EXPECT_EQ(EventCount(run_id, "run.succeeded"), 1);
}

TEST_F(RunLeaseTest, AClaimMadeWhileADeliveryEndsIsHandedOnNotStranded) {
  DyingStore* counted = BecomeMortal();
  // Once: the commit that gave the lease up is followed, before its
  // delivery ends, by the dispatcher claiming the run's next callback.
  std::atomic<bool> raced{false};
  counted->after_commit = [&](const TurnCommit& commit) {
    if (commit.release_lease_of.empty() || !commit.next_callback || raced.exchange(true)) return;
    const int claims = counted->claimed();
    now_ = std::max(now_.load(), commit.next_callback->due_at_ms);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (counted->claimed() == claims && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  runtime_->Start();
  const std::string run_id = Start();
  // Less clock than a lease: a claim dropped while its run was in flight
  // would strand the lease it took, and the run, past that.
  for (int i = 0; i < 100 && Phase(run_id) != "succeeded"; ++i) {
    now_ += 100;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  runtime_->Stop();
  EXPECT_TRUE(raced.load());
  EXPECT_EQ(Phase(run_id), "succeeded");
}

TEST_F(RunLeaseTest, RunsOfOneWorkflowUnsealItsDefinitionOnce) {
  DyingStore* counted = BecomeMortal();
  const std::string first = Start("MARKER_ONE");
  const std::string second = Start("MARKER_TWO");
  RunUntil([&] { return Phase(first) == "succeeded" && Phase(second) == "succeeded"; });
  ASSERT_EQ(Phase(first), "succeeded");
  ASSERT_EQ(Phase(second), "succeeded");
  // Every turn of both runs needs the definition; the first read validated
  // it and it is known by its digest from then on.
  EXPECT_EQ(counted->definitions_read(), 1);
}

}  // namespace
}  // namespace aevatar::orchestrator
