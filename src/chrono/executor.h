#ifndef AEVATAR_CHRONO_EXECUTOR_H_
#define AEVATAR_CHRONO_EXECUTOR_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "chrono/credential_sealer.h"
#include "chrono/metrics.h"
#include "chrono/operation_store.h"
#include "sandbox/engine.h"

namespace aevatar::chrono {

struct ExecutorOptions {
  int workers = 2;        // runs executing at once
  int queue_depth = 64;   // accepted runs waiting for a worker, sync and durable together
  std::string runner_id;  // this process; recorded on claimed operations
  int64_t retention_ms = 24 * 3600 * 1000LL;
};

// The bounded worker pool behind /execute and /executions.
//
// Workers are long-lived threads (a sandbox dies with the thread that started
// it). Each takes, in order: a waiting synchronous run, else the oldest queued
// durable operation from the store. Admission is bounded: past queue_depth
// waiting runs, submissions fail with 429 QUEUE_FULL and nothing is stored.
// Durable operations are claimed from the store, so queued work that survived
// a restart is picked up the same way as new work. Thread-safe.
class Executor {
 public:
  Executor(ExecutorOptions options, sandbox::Engine* engine, OperationStore* store,
           const CredentialSealer* sealer, Metrics* metrics);
  ~Executor();

  // Marks operations this runner left running as outcome_uncertain, counts
  // the queue, and starts the workers.
  absl::Status Start();
  // Stops taking work and joins the workers (runs in progress finish first).
  void Stop();

  // Runs `spec` on a worker and waits for it (the synchronous /execute path).
  absl::StatusOr<sandbox::RunResult> RunSync(sandbox::RunSpec spec);

  // Stores `op` (status queued) unless the owner already used its key, and
  // wakes a worker. ResourceExhausted QUEUE_FULL when the queue is full.
  absl::StatusOr<CreateOutcome> Submit(const Operation& op);

  // Cancels: a queued operation becomes cancelled; a running one is killed and
  // finishes as cancelled; a terminal one is unchanged. Returns it afterwards.
  absl::StatusOr<Operation> Cancel(const std::string& id);

  int64_t queued() const;
  int64_t running() const;

 private:
  void WorkerLoop();
  void RunOperation(const Operation& op);
  absl::Status AdmitOne() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExecutorOptions options_;
  sandbox::Engine* const engine_;
  OperationStore* const store_;
  const CredentialSealer* const sealer_;
  Metrics* const metrics_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> sync_jobs_ ABSL_GUARDED_BY(mu_);
  int64_t durable_queued_ ABSL_GUARDED_BY(mu_) = 0;  // queued operations in the store
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> cancel_fds_ ABSL_GUARDED_BY(mu_);  // running op -> write end
  std::vector<std::thread> threads_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_EXECUTOR_H_
