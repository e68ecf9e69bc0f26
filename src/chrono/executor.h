#ifndef AEVATAR_CHRONO_EXECUTOR_H_
#define AEVATAR_CHRONO_EXECUTOR_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "chrono/credential_sealer.h"
#include "chrono/lease_keeper.h"
#include "chrono/metrics.h"
#include "chrono/operation_store.h"
#include "chrono/run_pace.h"
#include "sandbox/runner.h"

namespace aevatar::chrono {

struct ExecutorOptions {
  int workers = 2;  // runs executing at once
  // Synchronous runs waiting for a worker: each holds its caller's connection.
  int queue_depth = 64;
  // Durable operations accepted and not yet claimed: stored rows, a few KiB
  // each, so a burst of workflow steps waits here instead of bouncing on
  // 429 and coming back a Retry-After later while the workers idle.
  int durable_queue_depth = 10000;
  // This instance's identity, recorded on the operations it claims; required.
  // It must stay the same across restarts of the instance (the service keeps
  // it in its state directory) and differ between instances sharing a store:
  // Start() marks exactly the operations claimed under it.
  std::string runner_id;
  // A claim's lease (lease_keeper.h): renewed every lease_tick while the
  // program runs; other runners settle the run as outcome_uncertain once it
  // lapses. Must exceed lease_tick by a wide margin.
  int64_t lease_ms = 15000;
  absl::Duration lease_tick = absl::Seconds(1);
  // Whether a queued operation's Retry-After follows this executor's recent
  // pace (PollAfterSecs). Only right when this executor is the one draining
  // the queue: with several replicas on one store it would overstate the wait.
  bool paced_retry_after = true;
};

// The bounded worker pool behind /execute and /executions.
//
// Workers are long-lived threads (a sandbox dies with the thread that started
// it). Each takes, in order: a waiting synchronous run, else the oldest queued
// durable operation from the store. Admission is bounded, each kind on its
// own: past queue_depth waiting synchronous runs, or durable_queue_depth
// queued operations (submissions still being committed count), a new one
// fails with 429 QUEUE_FULL and nothing is stored. Durable operations are
// claimed from the store, so queued work that survived a restart is picked up
// the same way as new work. The lock is never held across a store call or a run.
// Thread-safe, except that Start and Stop are called from one thread.
class Executor {
 public:
  // `runner`, `store`, `sealer` and `metrics` must outlive the executor;
  // `now` stamps the operations' times.
  Executor(ExecutorOptions options, sandbox::Runner* runner, OperationStore* store,
           const CredentialSealer* sealer, Metrics* metrics,
           base::UnixMsClock now = base::NowUnixMs);
  ~Executor();

  // Marks the operations this runner (options.runner_id) left running as
  // outcome_uncertain, counts the queue, and starts the workers and the
  // lease keeper. InvalidArgument without a runner id or a positive lease.
  absl::Status Start();
  // Stops taking work, fails every waiting synchronous run with 503
  // SHUTTING_DOWN, and joins the workers (runs in progress finish first,
  // their leases still renewed), then the lease keeper. Queued durable
  // operations stay queued in the store. Idempotent.
  void Stop();

  // Runs `spec` on a worker and waits for it (the synchronous /execute path).
  // 429 QUEUE_FULL when the queue is full; 503 SHUTTING_DOWN when the
  // executor stops before a worker took it.
  absl::StatusOr<sandbox::RunResult> RunSync(sandbox::RunSpec spec);

  // Stores `op` (status queued) unless the owner already used its key, and
  // wakes a worker. ResourceExhausted QUEUE_FULL when the queue is full.
  absl::StatusOr<CreateOutcome> Submit(const Operation& op);

  // Cancels: a queued operation becomes cancelled; a running one is killed and
  // finishes as cancelled; a terminal one is unchanged. Returns it afterwards.
  absl::StatusOr<Operation> Cancel(const std::string& id);

  // When a caller should poll the active `op` again: whole seconds
  // (Retry-After) and, when it is expected to end within a second,
  // milliseconds (Retry-After-Ms). Seconds: 1 unless it is queued behind
  // others and the recent pace says when its turn comes (run_pace.h).
  // Milliseconds: for a running operation, as long as it has run so far (its
  // end is unknown: the interval doubles until whole seconds take over); for
  // a queued one with nothing queued ahead of it, as long as it has waited
  // so far, but no later than its turn at the pace; for a queued one behind
  // others, the pace's estimate of its end. Queued ones get neither without
  // paced_retry_after. Never fails: a store error gives 1 s.
  struct PollHint {
    int64_t secs = 1;
    std::optional<int64_t> ms;
  };
  PollHint PollAfter(const Operation& op) const;

  // Waiting runs (synchronous, durable and submissions being committed).
  // The durable count is this executor's estimate: a claim that races a
  // submission's commit may count one more, until a worker finds nothing.
  int64_t queued() const;
  // Synchronous jobs waiting for a worker (exact).
  int64_t sync_queued() const;
  int64_t running() const;

 private:
  struct SyncJob;

  void WorkerLoop();
  // What a durable run came to: the terminal status and the result document.
  struct DurableOutcome {
    OperationStatus status;
    std::string result_json;
  };
  // Runs `op`, claimed by this worker, and records it finished; then, while
  // durable work waits and no synchronous job does, each operation claimed
  // with a finish (OperationStore::FinishAndClaimNext: one commit between
  // two runs). `busy_since_ms`: when this worker began on `op`, for the
  // pace: the end of its previous run when work was already waiting (the
  // commits and the claim between two runs are part of what a queued
  // operation waits for), else when the work arrived. Returns when the last
  // run ended.
  int64_t RunDurable(Operation op, int64_t busy_since_ms);
  // Runs a claimed operation's program; records nothing in the store.
  DurableOutcome RunOperation(const Operation& op);
  // Counts a queued operation taken up by a claim.
  void TookQueuedOperation() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a finish should claim the next operation with it; sets
  // `generation` to the durable generation it saw (ResyncDurableQueued's).
  bool ClaimsWithTheFinish(int64_t& generation) const ABSL_LOCKS_EXCLUDED(mu_);
  static void LogFinished(const std::string& id, OperationStatus status);
  // Records a run's outcome; retries while the store is unreachable, for up
  // to one lease (past it another runner may have settled the run).
  void FinishRun(const std::string& id, OperationStatus status, const std::string& result);
  // The durable runs in progress here, and ending one (for the lease keeper).
  std::vector<std::string> RunningOperationIds() const ABSL_LOCKS_EXCLUDED(mu_);
  void KillRun(const std::string& id) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status AdmitSync() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AdmitDurable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WorkReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the durable count to `count`, read from the store when the count
  // was at `generation`, unless it has changed since.
  void ResyncDurableQueued(int64_t generation, int64_t count) ABSL_LOCKS_EXCLUDED(mu_);

  const ExecutorOptions options_;
  sandbox::Runner* const runner_;
  OperationStore* const store_;
  const CredentialSealer* const sealer_;
  Metrics* const metrics_;
  const base::UnixMsClock now_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::unique_ptr<SyncJob>> sync_jobs_ ABSL_GUARDED_BY(mu_);
  int64_t durable_queued_ ABSL_GUARDED_BY(mu_) = 0;  // queued operations in the store
  // Bumped on every change of durable_queued_, so a recount read from the
  // store without the lock is applied only when nothing changed meanwhile.
  int64_t durable_generation_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t submitting_ ABSL_GUARDED_BY(mu_) = 0;  // admitted, commit in progress
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> cancel_fds_ ABSL_GUARDED_BY(mu_);  // running op -> write end
  std::vector<std::thread> threads_;                            // Start/Stop only
  std::unique_ptr<LeaseKeeper> lease_keeper_;                   // Start/Stop only
  RunPace pace_;                                                // durable runs finished
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_EXECUTOR_H_
