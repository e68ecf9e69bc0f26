#include "operation_store_suite.h"

#include <latch>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace aevatar::chrono {

void OperationStoreSuite::SetUp() {
  store_ = GetParam()();
  if (IsSkipped()) return;  // the factory skipped (e.g. no PostgreSQL server installed)
  ASSERT_NE(store_, nullptr);
}

Operation OperationStoreSuite::Create(const Operation& op) {
  absl::StatusOr<CreateOutcome> outcome = store_->CreateOrGet(op);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  if (!outcome.ok()) return Operation{};
  EXPECT_TRUE(outcome->created) << op.id;
  return outcome->operation;
}

Operation OperationStoreSuite::Claim(const std::string& runner_id, int64_t now_ms) {
  absl::StatusOr<std::optional<Operation>> claimed =
      store_->ClaimNext(runner_id, now_ms, kTestLeaseMs);
  EXPECT_TRUE(claimed.ok()) << claimed.status();
  if (!claimed.ok() || !claimed->has_value()) {
    ADD_FAILURE() << "nothing to claim";
    return Operation{};
  }
  return **claimed;
}

Operation NewOperation(const std::string& id, const std::string& owner, const std::string& key,
                       int64_t created_at_ms) {
  Operation op;
  op.id = id;
  op.owner = owner;
  op.idempotency_key_hash = absl::StrCat("hash-of-", key);
  op.fingerprint = absl::StrCat("fp-", id);
  op.request = absl::StrCat(R"j({"source":"print(1)","id":")j", id, R"j("})j");
  op.sealed_credentials = std::string("sealed\0bytes-", 13) + id;
  op.created_at_ms = created_at_ms;
  op.expires_at_ms = created_at_ms + 100000;
  return op;
}

void ExpectSameOperation(const Operation& actual, const Operation& expected) {
  EXPECT_EQ(actual.id, expected.id);
  EXPECT_EQ(actual.owner, expected.owner);
  EXPECT_EQ(actual.idempotency_key_hash, expected.idempotency_key_hash);
  EXPECT_EQ(actual.fingerprint, expected.fingerprint);
  EXPECT_EQ(actual.request, expected.request);
  EXPECT_EQ(actual.sealed_credentials, expected.sealed_credentials);
  EXPECT_EQ(actual.status, expected.status);
  EXPECT_EQ(actual.created_at_ms, expected.created_at_ms);
  EXPECT_EQ(actual.started_at_ms, expected.started_at_ms);
  EXPECT_EQ(actual.finished_at_ms, expected.finished_at_ms);
  EXPECT_EQ(actual.expires_at_ms, expected.expires_at_ms);
  EXPECT_EQ(actual.version, expected.version);
  EXPECT_EQ(actual.cancel_requested, expected.cancel_requested);
  EXPECT_EQ(actual.result, expected.result);
  EXPECT_EQ(actual.claimed_by, expected.claimed_by);
  EXPECT_EQ(actual.expired, expected.expired);
}

void ExpectConcurrentSameKeyCreatesMakeOne(const std::function<OperationStore&(int)>& store_for,
                                           int threads) {
  std::vector<absl::StatusOr<CreateOutcome>> outcomes(threads, absl::UnknownError("not run"));
  std::latch start(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      OperationStore& store = store_for(i);
      start.arrive_and_wait();  // all call at once
      outcomes[i] = store.CreateOrGet(NewOperation(absl::StrCat("op_", i), "alice", "same"));
    });
  }
  for (std::thread& t : workers) t.join();
  int created = 0;
  std::set<std::string> ids;
  for (int i = 0; i < threads; ++i) {
    ASSERT_TRUE(outcomes[i].ok()) << outcomes[i].status();
    ids.insert(outcomes[i]->operation.id);
    if (outcomes[i]->created) {
      ++created;
      EXPECT_EQ(outcomes[i]->operation.id, absl::StrCat("op_", i));  // the creator's own
    }
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(ids.size(), 1u);
}

namespace {

using S = OperationStatus;

TEST_P(OperationStoreSuite, CreateThenSameOwnerAndKeyReturnsTheStoredOperation) {
  const Operation first = NewOperation("op_1", "alice", "k");
  ExpectSameOperation(Create(first), first);
  Operation retry = NewOperation("op_2", "alice", "k");
  retry.fingerprint = "different payload";
  absl::StatusOr<CreateOutcome> again = store_->CreateOrGet(retry);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  ExpectSameOperation(again->operation, first);  // the caller compares fingerprints
  EXPECT_EQ(store_->Get("op_2").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(OperationStoreSuite, SameKeyDifferentOwnerCreatesTwo) {
  Create(NewOperation("op_a", "alice", "k"));
  Create(NewOperation("op_b", "bob", "k"));
  EXPECT_EQ(store_->Get("op_a")->owner, "alice");
  EXPECT_EQ(store_->Get("op_b")->owner, "bob");
  EXPECT_EQ(*store_->CountWithStatus(S::kQueued), 2);
}

TEST_P(OperationStoreSuite, FiftyConcurrentCreatesOfOneKeyCreateExactlyOne) {
  ExpectConcurrentSameKeyCreatesMakeOne([this](int) -> OperationStore& { return *store_; }, 50);
  EXPECT_EQ(*store_->CountWithStatus(S::kQueued), 1);
}

TEST_P(OperationStoreSuite, CreateRejectsAnOperationThatIsNotFresh) {
  Operation running = NewOperation("op_r", "alice", "k1");
  running.status = S::kRunning;
  EXPECT_EQ(store_->CreateOrGet(running).status().code(), absl::StatusCode::kInvalidArgument);
  Operation no_owner = NewOperation("op_o", "", "k2");
  EXPECT_EQ(store_->CreateOrGet(no_owner).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->CountWithStatus(S::kQueued), 0);
  EXPECT_EQ(*store_->CountWithStatus(S::kRunning), 0);
}

TEST_P(OperationStoreSuite, UnknownIdIsNotFound) {
  EXPECT_EQ(store_->Get("op_nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Finish("op_nope", S::kSucceeded, "{}", 1).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->RequestCancel("op_nope", 1).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(OperationStoreSuite, ClaimNextTakesTheOldestQueuedThenTheSmallerId) {
  Create(NewOperation("op_c", "alice", "k1", /*created_at_ms=*/300));
  Create(NewOperation("op_b", "alice", "k2", /*created_at_ms=*/100));
  Create(NewOperation("op_z", "alice", "k3", /*created_at_ms=*/200));
  Create(NewOperation("op_a", "bob", "k4", /*created_at_ms=*/200));
  EXPECT_EQ(store_->ClaimNext("", 1, kTestLeaseMs).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) {
    Operation op = Claim("runner-1", 5000 + i);
    EXPECT_EQ(op.status, S::kRunning);
    EXPECT_EQ(op.started_at_ms, 5000 + i);
    EXPECT_EQ(op.claimed_by, "runner-1");
    EXPECT_EQ(op.version, 2);
    EXPECT_EQ(op.lease_expires_at_ms, 5000 + i + kTestLeaseMs);
    EXPECT_FALSE(op.request.empty());  // the runner needs it
    ExpectSameOperation(*store_->Get(op.id), op);
    order.push_back(op.id);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"op_b", "op_a", "op_z", "op_c"}));
  absl::StatusOr<std::optional<Operation>> none = store_->ClaimNext("runner-1", 6000, kTestLeaseMs);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST_P(OperationStoreSuite, ConcurrentClaimsHandOutEachOperationOnce) {
  constexpr int kOps = 40;
  constexpr int kRunners = 4;
  for (int i = 0; i < kOps; ++i)
    Create(NewOperation(absl::StrCat("op_", i), "o", "k" + std::to_string(i), i));
  std::vector<std::vector<std::string>> claimed(kRunners);
  std::latch start(kRunners);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRunners; ++r) {
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      for (;;) {
        absl::StatusOr<std::optional<Operation>> op =
            store_->ClaimNext(absl::StrCat("r", r), 1, kTestLeaseMs);
        if (!op.ok() || !op->has_value()) {
          EXPECT_TRUE(op.ok()) << op.status();
          return;
        }
        EXPECT_EQ((*op)->claimed_by, absl::StrCat("r", r));
        claimed[r].push_back((*op)->id);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::multiset<std::string> all;
  for (const auto& ids : claimed) all.insert(ids.begin(), ids.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kOps));
  for (int i = 0; i < kOps; ++i) EXPECT_EQ(all.count(absl::StrCat("op_", i)), 1u) << i;
  EXPECT_EQ(*store_->CountWithStatus(S::kRunning), kOps);
}

TEST_P(OperationStoreSuite, FinishOnlyFromRunningAndClearsPayloads) {
  Create(NewOperation("op_1", "alice", "k"));
  absl::StatusOr<Operation> early = store_->Finish("op_1", S::kSucceeded, "{}", 2000);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition) << early.status();
  Claim("runner-1", 1500);
  EXPECT_EQ(store_->Finish("op_1", S::kRunning, "{}", 2000).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Operation> done = store_->Finish("op_1", S::kSucceeded, R"({"exit":0})", 2000);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status, S::kSucceeded);
  EXPECT_EQ(done->result, R"({"exit":0})");
  EXPECT_EQ(done->finished_at_ms, 2000);
  EXPECT_EQ(done->started_at_ms, 1500);
  EXPECT_EQ(done->request, "");
  EXPECT_EQ(done->sealed_credentials, "");
  EXPECT_EQ(done->version, 3);
  ExpectSameOperation(*store_->Get("op_1"), *done);
  absl::StatusOr<Operation> twice = store_->Finish("op_1", S::kFailed, "{}", 3000);
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kFailedPrecondition);
  ExpectSameOperation(*store_->Get("op_1"), *done);  // terminal states never change
}

TEST_P(OperationStoreSuite, FinishAndClaimNextFinishesOneAndTakesTheOldestQueued) {
  Create(NewOperation("op_1", "alice", "k1", 1000));
  Create(NewOperation("op_3", "alice", "k3", 1200));
  Create(NewOperation("op_2", "alice", "k2", 1100));
  Claim("runner-1", 1500);
  auto next = store_->FinishAndClaimNext("op_1", S::kSucceeded, R"({"exit":0})", "runner-1", 2000,
                                         kTestLeaseMs);
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->id, "op_2");
  EXPECT_EQ((*next)->status, S::kRunning);
  EXPECT_EQ((*next)->claimed_by, "runner-1");
  EXPECT_EQ((*next)->started_at_ms, 2000);
  ExpectSameOperation(*store_->Get("op_2"), **next);
  const Operation finished = *store_->Get("op_1");
  EXPECT_EQ(finished.status, S::kSucceeded);
  EXPECT_EQ(finished.result, R"({"exit":0})");
  EXPECT_EQ(finished.finished_at_ms, 2000);
  EXPECT_EQ(finished.request, "");

  auto third = store_->FinishAndClaimNext("op_2", S::kFailed, "{}", "runner-1", 2100, kTestLeaseMs);
  ASSERT_TRUE(third.ok() && third->has_value()) << third.status();
  EXPECT_EQ((*third)->id, "op_3");
  // The last one: finished, and nothing left to claim.
  auto last = store_->FinishAndClaimNext("op_3", S::kFailed, "{}", "runner-1", 2300, kTestLeaseMs);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_FALSE(last->has_value());
  EXPECT_EQ(store_->Get("op_3")->status, S::kFailed);
}

TEST_P(OperationStoreSuite, FinishAndClaimNextOfAnOperationNotRunningClaimsNothing) {
  Create(NewOperation("op_1", "alice", "k1", 1000));
  Create(NewOperation("op_2", "alice", "k2", 1100));
  // op_1 is still queued: no finish, and op_1 and op_2 stay queued.
  auto early =
      store_->FinishAndClaimNext("op_1", S::kSucceeded, "{}", "runner-1", 2000, kTestLeaseMs);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition) << early.status();
  EXPECT_EQ(store_->Get("op_1")->status, S::kQueued);
  EXPECT_EQ(store_->Get("op_2")->status, S::kQueued);
  Claim("runner-1", 2100);
  EXPECT_EQ(store_->FinishAndClaimNext("op_1", S::kRunning, "{}", "runner-1", 2200, kTestLeaseMs)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get("op_2")->status, S::kQueued);
}

TEST_P(OperationStoreSuite, VersionChangesExactlyWithTheStatusDocument) {
  EXPECT_EQ(Create(NewOperation("op_1", "alice", "k")).version, 1);
  EXPECT_EQ(store_->Get("op_1")->version, 1);  // reads change nothing
  EXPECT_EQ(store_->CreateOrGet(NewOperation("op_x", "alice", "k"))->operation.version, 1);
  EXPECT_EQ(Claim("r", 10).version, 2);
  // The cancel request is a flag for the runner, not a status or time change.
  EXPECT_EQ(store_->RequestCancel("op_1", 11)->version, 2);
  EXPECT_EQ(store_->RequestCancel("op_1", 12)->version, 2);
  EXPECT_EQ(store_->Finish("op_1", S::kCancelled, "{}", 13)->version, 3);
  EXPECT_EQ(store_->RequestCancel("op_1", 14)->version, 3);
  EXPECT_EQ(*store_->MarkRunningUncertain("r", 15), 0);
  EXPECT_EQ(store_->Get("op_1")->version, 3);
}

TEST_P(OperationStoreSuite, CancelQueuedIsTerminalAtOnce) {
  Create(NewOperation("op_1", "alice", "k"));
  absl::StatusOr<Operation> cancelled = store_->RequestCancel("op_1", 1234);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->status, S::kCancelled);
  EXPECT_EQ(cancelled->finished_at_ms, 1234);
  EXPECT_EQ(cancelled->request, "");
  EXPECT_EQ(cancelled->sealed_credentials, "");
  EXPECT_EQ(cancelled->version, 2);
  ExpectSameOperation(*store_->Get("op_1"), *cancelled);
  EXPECT_FALSE(store_->ClaimNext("r", 1300, kTestLeaseMs)->has_value());  // never runs
}

TEST_P(OperationStoreSuite, CancelRunningOnlyFlagsTheRunner) {
  Create(NewOperation("op_1", "alice", "k"));
  const Operation running = Claim("r", 100);
  absl::StatusOr<Operation> flagged = store_->RequestCancel("op_1", 200);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  Operation expected = running;
  expected.cancel_requested = true;
  ExpectSameOperation(*flagged, expected);
  ExpectSameOperation(*store_->Get("op_1"), expected);
  absl::StatusOr<Operation> finished = store_->Finish("op_1", S::kCancelled, "{}", 300);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->status, S::kCancelled);
  EXPECT_TRUE(finished->cancel_requested);
}

TEST_P(OperationStoreSuite, CancelTerminalChangesNothing) {
  Create(NewOperation("op_1", "alice", "k"));
  Claim("r", 100);
  const Operation done = *store_->Finish("op_1", S::kFailed, R"({"error":"x"})", 200);
  absl::StatusOr<Operation> after = store_->RequestCancel("op_1", 300);
  ASSERT_TRUE(after.ok()) << after.status();
  ExpectSameOperation(*after, done);
  ExpectSameOperation(*store_->Get("op_1"), done);
}

TEST_P(OperationStoreSuite, MarkRunningUncertainOnlyTouchesTheRunnersOperations) {
  Create(NewOperation("op_1", "o", "k1", 1));
  Create(NewOperation("op_2", "o", "k2", 2));
  Create(NewOperation("op_3", "o", "k3", 3));
  Create(NewOperation("op_4", "o", "k4", 4));
  Claim("r1", 10);  // op_1
  const Operation other = Claim("r2", 11);
  Claim("r1", 12);  // op_3, then finished
  const Operation finished = *store_->Finish("op_3", S::kSucceeded, "{}", 13);
  absl::StatusOr<int> marked = store_->MarkRunningUncertain("r1", 50);
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_EQ(*marked, 1);
  Operation uncertain = *store_->Get("op_1");
  EXPECT_EQ(uncertain.status, S::kOutcomeUncertain);
  EXPECT_EQ(uncertain.finished_at_ms, 50);
  EXPECT_EQ(uncertain.version, 3);
  EXPECT_EQ(uncertain.request, "");  // terminal: payloads go
  EXPECT_EQ(uncertain.sealed_credentials, "");
  EXPECT_EQ(uncertain.lease_expires_at_ms, 0);
  ExpectSameOperation(*store_->Get("op_2"), other);
  ExpectSameOperation(*store_->Get("op_3"), finished);
  EXPECT_EQ(store_->Get("op_4")->status, S::kQueued);
  EXPECT_EQ(*store_->MarkRunningUncertain("r1", 60), 0);  // never re-run, never re-marked
}

TEST_P(OperationStoreSuite, MarkRunningUncertainNeedsARunnerAndNeverMeansEveryRunner) {
  for (int i = 0; i < 3; ++i)
    Create(NewOperation(absl::StrCat("op_", i), "o", std::to_string(i), i));
  Claim("r1", 10);
  Claim("r2", 11);
  absl::StatusOr<int> marked = store_->MarkRunningUncertain("", 20);
  EXPECT_EQ(marked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->CountWithStatus(S::kOutcomeUncertain), 0);
  EXPECT_EQ(*store_->CountWithStatus(S::kRunning), 2);
  EXPECT_EQ(*store_->CountWithStatus(S::kQueued), 1);
}

TEST_P(OperationStoreSuite, ExpireOldMakesTombstonesThenDeletesThem) {
  Operation due = NewOperation("op_due", "o", "k1", 1);
  due.expires_at_ms = 1000;
  Operation later = NewOperation("op_later", "o", "k2", 2);
  later.expires_at_ms = 5000;
  Operation queued = NewOperation("op_queued", "o", "k3", 3);
  queued.expires_at_ms = 1000;  // not terminal: never expires
  Create(due);
  Create(later);
  Claim("r", 10);
  Claim("r", 11);
  store_->Finish("op_due", S::kSucceeded, R"({"out":"secret"})", 20).IgnoreError();
  const Operation later_done = *store_->Finish("op_later", S::kFailed, "{}", 21);
  Create(queued);
  EXPECT_EQ(store_->ExpireOld(1000, -1).status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(*store_->ExpireOld(999, 500), 0);
  EXPECT_EQ(*store_->ExpireOld(1000, 500), 1);
  Operation tombstone = *store_->Get("op_due");
  EXPECT_TRUE(tombstone.expired);
  EXPECT_EQ(tombstone.status, S::kSucceeded);
  EXPECT_EQ(tombstone.result, "");
  EXPECT_EQ(tombstone.request, "");
  EXPECT_EQ(tombstone.sealed_credentials, "");
  EXPECT_EQ(tombstone.version, 3);              // expiry is not a status change
  EXPECT_EQ(*store_->ExpireOld(1001, 500), 0);  // counted once
  EXPECT_EQ(*store_->ExpireOld(1499, 500), 0);
  EXPECT_TRUE(store_->Get("op_due").ok());  // still a tombstone: a late read gets 410
  EXPECT_EQ(*store_->ExpireOld(1500, 500), 0);
  EXPECT_EQ(store_->Get("op_due").status().code(), absl::StatusCode::kNotFound);

  ExpectSameOperation(*store_->Get("op_later"), later_done);
  ExpectSameOperation(*store_->Get("op_queued"), queued);
  // Once the tombstone is gone the key is free again.
  EXPECT_TRUE(store_->CreateOrGet(NewOperation("op_new", "o", "k1"))->created);
}

TEST_P(OperationStoreSuite, CountWithStatusCountsEachStatus) {
  for (int i = 0; i < 6; ++i)
    Create(NewOperation(absl::StrCat("op_", i), "o", std::to_string(i), i));
  Claim("r", 10);  // op_0
  Claim("r", 10);  // op_1
  Claim("r", 10);  // op_2
  store_->Finish("op_0", S::kSucceeded, "{}", 20).IgnoreError();
  store_->Finish("op_1", S::kFailed, "{}", 20).IgnoreError();
  store_->RequestCancel("op_3", 20).IgnoreError();
  EXPECT_EQ(*store_->CountWithStatus(S::kQueued), 2);
  EXPECT_EQ(*store_->CountWithStatus(S::kRunning), 1);
  EXPECT_EQ(*store_->CountWithStatus(S::kSucceeded), 1);
  EXPECT_EQ(*store_->CountWithStatus(S::kFailed), 1);
  EXPECT_EQ(*store_->CountWithStatus(S::kCancelled), 1);
  EXPECT_EQ(*store_->CountWithStatus(S::kOutcomeUncertain), 0);
}

TEST_P(OperationStoreSuite, CountQueuedAheadCountsWhatAClaimTakesFirst) {
  // op_b and op_c are as old as each other: the smaller id goes first.
  Create(NewOperation("op_a", "o", "a", 1));
  Create(NewOperation("op_b", "o", "b", 2));
  Create(NewOperation("op_c", "p", "c", 2));
  Create(NewOperation("op_d", "o", "d", 3));
  auto ahead = [&](const std::string& id, int64_t at_most = 100) {
    return *store_->CountQueuedAhead(*store_->Get(id), at_most);
  };
  EXPECT_EQ(ahead("op_a"), 0);
  EXPECT_EQ(ahead("op_b"), 1);
  EXPECT_EQ(ahead("op_c"), 2);  // another owner's operation is in the same queue
  EXPECT_EQ(ahead("op_d"), 3);
  EXPECT_EQ(ahead("op_d", 2), 2);  // counted no further than asked
  EXPECT_EQ(ahead("op_d", 0), 0);
  Claim("r", 10);                                   // op_a leaves the queue
  store_->RequestCancel("op_b", 20).IgnoreError();  // and so does op_b
  EXPECT_EQ(ahead("op_d"), 1);
}

TEST_P(OperationStoreSuite, PingSucceedsOnAHealthyStore) { EXPECT_TRUE(store_->Ping().ok()); }

}  // namespace
}  // namespace aevatar::chrono
