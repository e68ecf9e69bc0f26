// The executor's worker pool against a real SQLite store and a FakeRunner:
// shutdown, the runner id, the queue bound and the lock discipline.
#include "chrono/executor.h"

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "chrono/execute_request.h"
#include "chrono_harness.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

using ::aevatar::testing::kHangGuard;
using ::aevatar::testing::PollUntil;

using S = OperationStatus;

sandbox::RunSpec BashSpec(const std::string& source) {
  sandbox::RunSpec spec;
  spec.language = sandbox::Language::kBash;
  spec.source = source;
  return spec;
}

// RunSync on a detached thread: an executor that never answers must fail the
// test, not hang it (std::async's future would wait for the thread).
std::future<absl::StatusOr<sandbox::RunResult>> RunSyncDetached(Executor& executor,
                                                                sandbox::RunSpec spec) {
  auto done = std::make_shared<std::promise<absl::StatusOr<sandbox::RunResult>>>();
  auto result = done->get_future();
  std::thread([&executor, spec = std::move(spec), done] {
    done->set_value(executor.RunSync(spec));
  }).detach();
  return result;
}

// Runs `cleanup` when the scope ends, so a failed assertion cannot leave a
// thread blocked on a gate.
struct Finally {
  std::function<void()> cleanup;
  ~Finally() { cleanup(); }
};

// Passes every call through to `inner`, except that CreateOrGet waits while
// the gate is held (a slow fsync'd commit).
class GatedStore : public OperationStore {
 public:
  explicit GatedStore(OperationStore* inner) : inner_(inner) {}

  void Hold() {
    absl::MutexLock lock(&mu_);
    held_ = true;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    held_ = false;
  }
  // Waits until `count` CreateOrGet calls are inside the store.
  bool WaitEntered(int count) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entered_ >= count; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30));
  }

  absl::StatusOr<CreateOutcome> CreateOrGet(const Operation& op) override {
    {
      absl::MutexLock lock(&mu_);
      ++entered_;
      auto released = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !held_; };
      mu_.Await(absl::Condition(&released));
    }
    return inner_->CreateOrGet(op);
  }
  absl::StatusOr<Operation> Get(const std::string& id) override { return inner_->Get(id); }
  absl::StatusOr<std::optional<Operation>> ClaimNext(const std::string& runner_id, int64_t now_ms,
                                                     int64_t lease_ms) override {
    return inner_->ClaimNext(runner_id, now_ms, lease_ms);
  }
  absl::StatusOr<std::vector<LeaseRenewal>> RenewLeases(const std::string& runner_id,
                                                        const std::vector<std::string>& ids,
                                                        int64_t now_ms, int64_t lease_ms) override {
    return inner_->RenewLeases(runner_id, ids, now_ms, lease_ms);
  }
  absl::StatusOr<int> SettleExpiredLeases(int64_t now_ms) override {
    return inner_->SettleExpiredLeases(now_ms);
  }
  absl::StatusOr<Operation> Finish(const std::string& id, OperationStatus status,
                                   const std::string& result, int64_t now_ms) override {
    return inner_->Finish(id, status, result, now_ms);
  }
  absl::StatusOr<Operation> RequestCancel(const std::string& id, int64_t now_ms) override {
    return inner_->RequestCancel(id, now_ms);
  }
  absl::StatusOr<int> MarkRunningUncertain(const std::string& runner_id, int64_t now_ms) override {
    return inner_->MarkRunningUncertain(runner_id, now_ms);
  }
  absl::StatusOr<int> ExpireOld(int64_t now_ms, int64_t tombstone_keep_ms) override {
    return inner_->ExpireOld(now_ms, tombstone_keep_ms);
  }
  absl::StatusOr<int64_t> CountWithStatus(OperationStatus status) override {
    return inner_->CountWithStatus(status);
  }
  absl::StatusOr<int64_t> CountQueuedAhead(const Operation& op, int64_t at_most) override {
    return inner_->CountQueuedAhead(op, at_most);
  }
  absl::Status Ping() override { return inner_->Ping(); }
  absl::StatusOr<std::vector<Operation>> ListOwned(const OperationListQuery& q) override {
    return inner_->ListOwned(q);
  }

 private:
  OperationStore* const inner_;
  absl::Mutex mu_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(Executor, RunsSyncJobsAndDurableOperationsWithTheInjectedClock) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  h.runner().Open();
  auto sync = h.executor().RunSync(BashSpec("echo sync"));
  ASSERT_TRUE(sync.ok()) << sync.status();
  EXPECT_EQ(sync->stdout_data, "echo sync");

  auto submitted = h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now()));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  ASSERT_TRUE(PollUntil([&] { return IsTerminal(h.store().Get("op_1")->status); }));
  Operation done = *h.store().Get("op_1");
  EXPECT_EQ(done.status, S::kSucceeded);
  EXPECT_EQ(done.claimed_by, "runner-test");
  EXPECT_EQ(done.started_at_ms, h.clock().Now());
  EXPECT_EQ(done.finished_at_ms, h.clock().Now());
}

// A worker claims the next durable operation with a run's finish only while
// no synchronous job waits: one that does runs before the queued operations.
TEST(Executor, ASynchronousJobWaitingGoesBeforeTheNextDurableOperation) {
  ChronoHarness h;  // one worker
  ASSERT_TRUE(h.Start().ok());
  Finally cleanup{[&] { h.runner().Open(); }};
  h.runner().Close();
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now(), "echo 1")).ok());
  ASSERT_TRUE(h.runner().WaitStarted(1));
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_2", "k2", h.clock().Now(), "echo 2")).ok());
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_3", "k3", h.clock().Now(), "echo 3")).ok());
  auto sync = RunSyncDetached(h.executor(), BashSpec("echo sync"));
  // The job itself, not the total: a worker's idle claim that raced op_1's
  // submission may have counted one durable operation twice.
  ASSERT_TRUE(PollUntil([&] { return h.executor().sync_queued() == 1; }));
  h.runner().Open();
  ASSERT_EQ(sync.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_TRUE(PollUntil([&] { return IsTerminal(h.store().Get("op_3")->status); }));
  EXPECT_EQ(h.runner().sources(),
            (std::vector<std::string>{"echo 1", "echo sync", "echo 2", "echo 3"}));
  for (const char* id : {"op_1", "op_2", "op_3"}) {
    EXPECT_EQ(h.store().Get(id)->status, S::kSucceeded) << id;
  }
}

TEST(Executor, StopFailsWaitingSyncRunsWithShuttingDown) {
  ChronoHarness h;  // one worker
  ASSERT_TRUE(h.Start().ok());
  auto first = std::async(std::launch::async, [&] { return h.executor().RunSync(BashSpec("a")); });
  ASSERT_TRUE(h.runner().WaitStarted(1));
  auto second = RunSyncDetached(h.executor(), BashSpec("b"));
  ASSERT_TRUE(PollUntil([&] { return h.executor().queued() == 1; }));
  auto stop = std::async(std::launch::async, [&] { h.executor().Stop(); });
  Finally cleanup{[&] {
    h.runner().Open();
    if (stop.valid()) stop.wait();
    h.Shutdown();  // a job left behind is dropped with the executor
  }};

  ASSERT_EQ(second.wait_for(kHangGuard), std::future_status::ready)
      << "a RunSync waiting for a worker was left behind by Stop";
  absl::StatusOr<sandbox::RunResult> refused = second.get();
  EXPECT_EQ(base::ApiCode(refused.status()), "SHUTTING_DOWN") << refused.status();
  EXPECT_EQ(base::HttpStatusFor(refused.status()), 503);

  h.runner().Open();  // the run in progress finishes first, then Stop returns
  stop.get();
  absl::StatusOr<sandbox::RunResult> finished = first.get();
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->stdout_data, "a");
  EXPECT_EQ(h.runner().sources(), std::vector<std::string>{"a"});
  EXPECT_EQ(base::ApiCode(h.executor().RunSync(BashSpec("c")).status()), "SHUTTING_DOWN");
}

TEST(Executor, StartMarksOnlyThisRunnersOperationsUncertain) {
  ChronoHarness h;  // runner id "runner-test"
  for (const char* id : {"op_mine", "op_other"}) {
    ASSERT_TRUE(h.store().CreateOrGet(NewBashOperation(id, id, 100)).ok());
  }
  ASSERT_EQ((*h.store().ClaimNext("runner-test", 200, 60000))->id, "op_mine");
  ASSERT_EQ((*h.store().ClaimNext("runner-elsewhere", h.clock().Now(), 3600 * 1000))->id,
            "op_other");

  ASSERT_TRUE(h.Start().ok());
  Operation mine = *h.store().Get("op_mine");
  EXPECT_EQ(mine.status, S::kOutcomeUncertain);
  EXPECT_EQ(mine.finished_at_ms, h.clock().Now());
  // Another instance's run on a shared store is not this process's to judge.
  Operation other = *h.store().Get("op_other");
  EXPECT_EQ(other.status, S::kRunning);
  EXPECT_EQ(other.claimed_by, "runner-elsewhere");
}

TEST(Executor, StartRequiresARunnerId) {
  ExecutorOptions options = ChronoHarness::DefaultOptions();
  options.runner_id = "";
  ChronoHarness h(options);
  EXPECT_EQ(h.Start().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Executor, SubmitDoesNotHoldTheLockAcrossTheStoreCommit) {
  ChronoHarness h;
  GatedStore gated(&h.store());
  gated.Hold();
  ASSERT_TRUE(h.Start(&gated).ok());
  auto submit = std::async(std::launch::async, [&] {
    return h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now()));
  });
  ASSERT_TRUE(gated.WaitEntered(1));
  auto probe = std::async(std::launch::async, [&] { return h.executor().queued(); });
  Finally cleanup{[&] {
    gated.Release();
    if (submit.valid()) submit.wait();
    if (probe.valid()) probe.wait();
    h.Shutdown();  // before `gated` goes
  }};

  ASSERT_EQ(probe.wait_for(kHangGuard), std::future_status::ready)
      << "the executor's lock is held while the store commits";
  EXPECT_EQ(probe.get(), 1);  // the submission holds its place in the queue
  gated.Release();
  auto outcome = submit.get();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->created);
}

TEST(Executor, ASubmissionBeingCommittedCountsAgainstTheQueueBound) {
  ExecutorOptions options = ChronoHarness::DefaultOptions();
  options.durable_queue_depth = 1;
  ChronoHarness h(options);
  GatedStore gated(&h.store());
  gated.Hold();
  ASSERT_TRUE(h.Start(&gated).ok());
  auto first = std::async(std::launch::async, [&] {
    return h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now()));
  });
  ASSERT_TRUE(gated.WaitEntered(1));
  auto second = std::async(std::launch::async, [&] {
    return h.executor().Submit(NewBashOperation("op_2", "k2", h.clock().Now()));
  });
  Finally cleanup{[&] {
    gated.Release();
    for (auto* pending : {&first, &second}) {
      if (pending->valid()) pending->wait();
    }
    h.Shutdown();  // before `gated` goes
  }};

  ASSERT_EQ(second.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_EQ(base::ApiCode(second.get().status()), "QUEUE_FULL");
  gated.Release();
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(h.store().Get("op_2").status().code(), absl::StatusCode::kNotFound);
}

TEST(Executor, SynchronousAndDurableRunsEachHaveTheirOwnQueueBound) {
  ExecutorOptions options = ChronoHarness::DefaultOptions();  // one worker
  options.queue_depth = 1;
  options.durable_queue_depth = 3;
  ChronoHarness h(options);
  ASSERT_TRUE(h.Start().ok());
  auto held = std::async(std::launch::async, [&] { return h.executor().RunSync(BashSpec("a")); });
  ASSERT_TRUE(h.runner().WaitStarted(1));  // the worker is busy from here on
  auto waiting = RunSyncDetached(h.executor(), BashSpec("b"));
  ASSERT_TRUE(PollUntil([&] { return h.executor().queued() == 1; }));
  Finally cleanup{[&] {
    h.runner().Open();
    if (held.valid()) held.wait();
    if (waiting.valid()) waiting.wait_for(kHangGuard);
    h.Shutdown();
  }};

  // The synchronous queue is full, and durable operations are still accepted.
  EXPECT_EQ(base::ApiCode(h.executor().RunSync(BashSpec("c")).status()), "QUEUE_FULL");
  for (const char* id : {"op_1", "op_2", "op_3"}) {
    auto submitted = h.executor().Submit(NewBashOperation(id, id, h.clock().Now()));
    EXPECT_TRUE(submitted.ok()) << id << ": " << submitted.status();
  }
  EXPECT_EQ(h.executor().queued(), 4);
  // Now both are full, each by its own bound.
  EXPECT_EQ(
      base::ApiCode(h.executor().Submit(NewBashOperation("op_4", "k4", h.clock().Now())).status()),
      "QUEUE_FULL");
  EXPECT_EQ(h.store().Get("op_4").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(base::ApiCode(h.executor().RunSync(BashSpec("d")).status()), "QUEUE_FULL");

  h.runner().Open();
  for (const char* id : {"op_1", "op_2", "op_3"}) {
    EXPECT_TRUE(PollUntil([&] { return h.store().Get(id)->status == S::kSucceeded; })) << id;
  }
  ASSERT_EQ(waiting.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_TRUE(waiting.get().ok());
}

TEST(Executor, CancellingAQueuedOperationTwiceCountsItOnce) {
  ChronoHarness h;  // one worker, held by op_1
  ASSERT_TRUE(h.Start().ok());
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now())).ok());
  ASSERT_TRUE(h.runner().WaitStarted(1));
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_2", "k2", h.clock().Now())).ok());
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_3", "k3", h.clock().Now())).ok());
  ASSERT_EQ(h.executor().queued(), 2);

  for (int i = 0; i < 2; ++i) {
    auto cancelled = h.executor().Cancel("op_2");
    ASSERT_TRUE(cancelled.ok()) << cancelled.status();
    EXPECT_EQ(cancelled->status, S::kCancelled);
  }
  EXPECT_EQ(h.executor().queued(), 1);  // op_3 still waits

  h.runner().Open();
  ASSERT_TRUE(PollUntil([&] { return h.store().Get("op_3")->status == S::kSucceeded; }));
  EXPECT_EQ(h.runner().started(), 2);  // op_1 and op_3; the cancelled op_2 never ran
}

// PollAfter's seconds behind a pace of 500 ms, with paced_retry_after as given:
// of the 1st, 8th and 20th queued operations, of the running one, and of the
// 20th once nothing has finished for a while.
std::vector<int64_t> PollAftersBehindAPace(bool paced) {
  ExecutorOptions options = ChronoHarness::DefaultOptions();  // one worker
  options.paced_retry_after = paced;
  ChronoHarness h(options);
  EXPECT_TRUE(h.Start().ok());
  Finally cleanup{[&] {
    h.runner().Open();
    h.Shutdown();
  }};
  const std::vector<Operation> queued = QueueBehindAPaceOf500Ms(h);
  if (queued.size() != 20) return {};
  std::vector<int64_t> secs;
  for (int i : {0, 7, 19}) secs.push_back(h.executor().PollAfter(queued[i]).secs);
  secs.push_back(h.executor().PollAfter(*h.store().Get("op_held")).secs);
  h.clock().Advance(RunPace::kFreshMs + 1);
  secs.push_back(h.executor().PollAfter(queued[19]).secs);
  return secs;
}

TEST(Executor, AQueuedOperationFarBackIsToldToPollNearItsTurn) {
  // Next in line: 1. Then two thirds of the time the runs that end before
  // it (the held one and those queued ahead) and its own take, rounded up:
  // 9 and 21 runs of 500 ms. A running operation 1; a stale pace says
  // nothing.
  EXPECT_EQ(PollAftersBehindAPace(true), (std::vector<int64_t>{1, 3, 7, 1, 1}));
}

TEST(Executor, NextInLineAfterALongWaitIsToldThePaceNotHowLongItWaited) {
  ChronoHarness h;  // one worker, paced
  ASSERT_TRUE(h.Start().ok());
  Finally cleanup{[&] {
    h.runner().Open();
    h.Shutdown();
  }};
  const std::vector<Operation> queued = QueueBehindAPaceOf500Ms(h);
  ASSERT_EQ(queued.size(), 20u);
  // The first has waited 2 s behind the held run; the pace is still fresh.
  h.clock().Advance(2000);
  const Executor::PollHint hint = h.executor().PollAfter(queued[0]);
  EXPECT_EQ(hint.secs, 1);
  // One run at the pace, sooner than its wait so far (a second or more).
  EXPECT_EQ(hint.ms, std::optional<int64_t>(500));
  // A clock stepped back: the wait is negative and says nothing, the pace
  // still does.
  h.clock().Advance(-2100);
  EXPECT_EQ(h.executor().PollAfter(queued[0]).ms, std::optional<int64_t>(500));
}

TEST(Executor, WithoutPacedRetryAfterEveryActiveOperationPollsAfterOneSecond) {
  // As when several replicas drain one queue.
  EXPECT_EQ(PollAftersBehindAPace(false), (std::vector<int64_t>{1, 1, 1, 1, 1}));
}

TEST(Executor, CancelKillsARunningOperation) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  ASSERT_TRUE(h.executor().Submit(NewBashOperation("op_1", "k1", h.clock().Now())).ok());
  ASSERT_TRUE(h.runner().WaitStarted(1));
  ASSERT_TRUE(PollUntil([&] { return h.store().Get("op_1")->status == S::kRunning; }));
  auto flagged = h.executor().Cancel("op_1");
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_TRUE(flagged->cancel_requested);
  ASSERT_TRUE(PollUntil([&] { return IsTerminal(h.store().Get("op_1")->status); }));
  EXPECT_EQ(h.store().Get("op_1")->status, S::kCancelled);
}

}  // namespace
}  // namespace aevatar::chrono
