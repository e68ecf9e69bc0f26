#include "chrono/executor.h"

#include <algorithm>
#include <future>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/api_error.h"
#include "base/log.h"
#include "chrono/execute_request.h"
#include "chrono/execute_result.h"
#include "os/unique_fd.h"

namespace aevatar::chrono {
namespace {

using base::LogLevel;

// Idle workers look at the store this often, to pick up queued work that
// another path (a restart, a replica) made visible.
constexpr absl::Duration kIdlePoll = absl::Seconds(1);

absl::Status QueueFull() {
  return base::ApiError(absl::StatusCode::kResourceExhausted, "QUEUE_FULL",
                        "the execution queue is full; retry after the Retry-After delay", 429);
}

absl::Status ShuttingDown() {
  return base::ApiError(absl::StatusCode::kUnavailable, "SHUTTING_DOWN",
                        "the executor is shutting down", 503);
}

std::string FailureResult(const absl::Status& status) {
  nlohmann::json result = {
      {"success", false},
      {"exit_code", -1},
      {"stdout", ""},
      {"stderr", ""},
      {"timed_out", false},
      {"verdict", "sandbox_error"},
      {"error", {{"code", base::ApiCode(status)}, {"message", std::string(status.message())}}},
  };
  return result.dump();
}

// Wakes a running operation's sandbox through its cancel pipe.
void SignalCancel(int write_fd) { os::WriteWakeByte(write_fd); }

}  // namespace

// One synchronous run waiting for a worker, and the caller waiting for it.
struct Executor::SyncJob {
  sandbox::RunSpec spec;
  std::promise<absl::StatusOr<sandbox::RunResult>> done;
};

Executor::Executor(ExecutorOptions options, sandbox::Runner* runner, OperationStore* store,
                   const CredentialSealer* sealer, Metrics* metrics, base::UnixMsClock now)
    : options_(std::move(options)),
      runner_(runner),
      store_(store),
      sealer_(sealer),
      metrics_(metrics),
      now_(std::move(now)) {}

Executor::~Executor() { Stop(); }

absl::Status Executor::Start() {
  if (options_.runner_id.empty()) {
    return absl::InvalidArgumentError("the executor needs a runner id");
  }
  if (options_.lease_ms <= 0) return absl::InvalidArgumentError("the lease must be positive");
  auto uncertain = store_->MarkRunningUncertain(options_.runner_id, now_());
  if (!uncertain.ok()) return uncertain.status();
  if (*uncertain > 0) {
    base::Log(LogLevel::kWarn, "operations.outcome_uncertain", "", {{"count", *uncertain}});
  }
  auto queued = store_->CountWithStatus(OperationStatus::kQueued);
  if (!queued.ok()) return queued.status();
  {
    absl::MutexLock lock(&mu_);
    durable_queued_ = *queued;
    ++durable_generation_;
  }
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
  lease_keeper_ = std::make_unique<LeaseKeeper>(
      LeaseKeeperOptions{options_.runner_id, options_.lease_ms, options_.lease_tick}, store_, now_,
      RunsInProgress{[this] { return RunningOperationIds(); },
                     [this](const std::string& id) { KillRun(id); }});
  lease_keeper_->Start();
  return absl::OkStatus();
}

void Executor::Stop() {
  std::deque<std::unique_ptr<SyncJob>> abandoned;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    abandoned.swap(sync_jobs_);
  }
  // Their callers would otherwise wait for a worker that never comes.
  for (auto& job : abandoned) job->done.set_value(ShuttingDown());
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  if (lease_keeper_) lease_keeper_->Stop();  // after the runs: their leases stay renewed
}

std::vector<std::string> Executor::RunningOperationIds() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  ids.reserve(cancel_fds_.size());
  for (const auto& [id, fd] : cancel_fds_) ids.push_back(id);
  return ids;
}

void Executor::KillRun(const std::string& id) {
  absl::MutexLock lock(&mu_);
  if (auto it = cancel_fds_.find(id); it != cancel_fds_.end()) SignalCancel(it->second);
}

absl::Status Executor::AdmitSync() const {
  if (stopping_) return ShuttingDown();
  if (static_cast<int64_t>(sync_jobs_.size()) >= options_.queue_depth) return QueueFull();
  return absl::OkStatus();
}

absl::Status Executor::AdmitDurable() const {
  if (stopping_) return ShuttingDown();
  if (durable_queued_ + submitting_ >= options_.durable_queue_depth) return QueueFull();
  return absl::OkStatus();
}

bool Executor::WorkReady() const { return stopping_ || !sync_jobs_.empty() || durable_queued_ > 0; }

void Executor::ResyncDurableQueued(int64_t generation, int64_t count) {
  absl::MutexLock lock(&mu_);
  // A submission in flight may or may not be in `count`; leave it to the next
  // resync rather than count it twice or not at all.
  if (durable_generation_ != generation || submitting_ > 0) return;
  durable_queued_ = count;
  ++durable_generation_;
}

absl::StatusOr<sandbox::RunResult> Executor::RunSync(sandbox::RunSpec spec) {
  auto job = std::make_unique<SyncJob>();
  job->spec = std::move(spec);
  std::future<absl::StatusOr<sandbox::RunResult>> result = job->done.get_future();
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status st = AdmitSync(); !st.ok()) return st;
    sync_jobs_.push_back(std::move(job));
  }
  return result.get();
}

absl::StatusOr<CreateOutcome> Executor::Submit(const Operation& op) {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status st = AdmitDurable(); !st.ok()) return st;
    ++submitting_;  // holds the place in the queue while the commit runs unlocked
    ++durable_generation_;
  }
  absl::StatusOr<CreateOutcome> outcome = store_->CreateOrGet(op);
  absl::MutexLock lock(&mu_);
  --submitting_;
  ++durable_generation_;
  if (outcome.ok() && outcome->created) ++durable_queued_;
  return outcome;
}

absl::StatusOr<Operation> Executor::Cancel(const std::string& id) {
  auto op = store_->RequestCancel(id, now_());
  if (!op.ok()) return op.status();
  if (op->status == OperationStatus::kCancelled && op->started_at_ms == 0) {
    // Cancelled while queued, by this call or an earlier one: recount rather
    // than decrement, so a repeated cancel cannot count it twice.
    int64_t generation = 0;
    {
      absl::MutexLock lock(&mu_);
      generation = durable_generation_;
    }
    auto queued = store_->CountWithStatus(OperationStatus::kQueued);
    if (queued.ok()) ResyncDurableQueued(generation, *queued);
  }
  absl::MutexLock lock(&mu_);
  if (auto it = cancel_fds_.find(id); it != cancel_fds_.end()) SignalCancel(it->second);
  return op;
}

Executor::PollHint Executor::PollAfter(const Operation& op) const {
  const int64_t now = now_();
  // How long a run will take is unknown: as long as it has run so far, so
  // polls double their interval until whole seconds take over.
  if (op.status == OperationStatus::kRunning) return {1, PollAfterMs(now - op.started_at_ms)};
  // Queued: only this executor's own pace says when its turn comes.
  if (!options_.paced_retry_after || op.status != OperationStatus::kQueued) return {};
  const std::optional<int64_t> us_per_run = pace_.UsPerRun(now);
  // At least one is counted: "nothing ahead" must never be a count cut to 0.
  absl::StatusOr<int64_t> ahead = store_->CountQueuedAhead(
      op, us_per_run ? std::max<int64_t>(AheadWorthCounting(*us_per_run), 1) : 1);
  if (!ahead.ok()) return {};
  if (*ahead == 0) {
    // Next in line: as long as it has waited so far, like a run, but never
    // later than its turn at the pace. What it waited behind others says
    // nothing of when it starts: the last runs of a burst were read a
    // second late. A negative wait (a clock stepped back) says nothing at
    // all; the pace still does.
    const int64_t waited_ms = now - op.created_at_ms;
    if (!us_per_run) return {1, PollAfterMs(waited_ms)};
    const int64_t pace_ms = *us_per_run / 1000;
    return {1, PollAfterMs(waited_ms < 0 ? pace_ms : std::min(waited_ms, pace_ms))};
  }
  if (!us_per_run) return {};
  // Operations queued ahead of it exist, so every worker is busy: those runs
  // finish before it too (its own run lasts as long as one of theirs).
  const int64_t finishing_first = *ahead + options_.workers;
  return {chrono::PollAfterSecs(finishing_first, us_per_run),
          QueuedPollAfterMs(finishing_first, *us_per_run)};
}

int64_t Executor::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(sync_jobs_.size()) + durable_queued_ + submitting_;
}

int64_t Executor::sync_queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(sync_jobs_.size());
}

int64_t Executor::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

void Executor::WorkerLoop() {
  std::optional<int64_t> last_work_end_ms;  // when this worker last finished anything
  for (;;) {
    std::unique_ptr<SyncJob> job;
    int64_t generation = 0;
    int64_t busy_since_ms = 0;
    {
      absl::MutexLock lock(&mu_);
      const bool work_waited = WorkReady();
      mu_.AwaitWithTimeout(absl::Condition(this, &Executor::WorkReady), kIdlePoll);
      if (stopping_) return;
      busy_since_ms = work_waited && last_work_end_ms ? *last_work_end_ms : now_();
      if (!sync_jobs_.empty()) {
        job = std::move(sync_jobs_.front());
        sync_jobs_.pop_front();
      }
      generation = durable_generation_;
      ++running_;
    }
    std::optional<int64_t> durable_end_ms;  // a durable run's end, before its commit
    if (job) {
      job->done.set_value(runner_->Run(job->spec, {}));
    } else {
      auto claimed = store_->ClaimNext(options_.runner_id, now_(), options_.lease_ms);
      if (!claimed.ok()) {
        base::Log(LogLevel::kError, "operations.claim_failed", "",
                  {{"error", std::string(claimed.status().message())}});
      } else if (claimed->has_value()) {
        TookQueuedOperation();
        durable_end_ms = RunDurable(**std::move(claimed), busy_since_ms);
      } else {
        ResyncDurableQueued(generation, 0);  // the store has nothing queued
      }
    }
    last_work_end_ms = durable_end_ms ? *durable_end_ms : now_();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

void Executor::TookQueuedOperation() {
  absl::MutexLock lock(&mu_);
  if (durable_queued_ > 0) --durable_queued_;
  ++durable_generation_;
}

bool Executor::ClaimsWithTheFinish(int64_t& generation) const {
  absl::MutexLock lock(&mu_);
  generation = durable_generation_;
  // A synchronous job waiting goes first, as it does in WorkerLoop.
  return !stopping_ && sync_jobs_.empty() && durable_queued_ > 0;
}

int64_t Executor::RunDurable(Operation op, int64_t busy_since_ms) {
  for (;;) {
    const DurableOutcome outcome = RunOperation(op);
    // When the run ended, before the store shows it finished (a commit and
    // its retries take their time; a reader of the store sees the pace
    // include it).
    const int64_t ended_ms = now_();
    pace_.Finished(busy_since_ms, ended_ms);
    int64_t generation = 0;
    if (!ClaimsWithTheFinish(generation)) {
      FinishRun(op.id, outcome.status, outcome.result_json);
      return ended_ms;
    }
    auto next = store_->FinishAndClaimNext(op.id, outcome.status, outcome.result_json,
                                           options_.runner_id, now_(), options_.lease_ms);
    if (!next.ok()) {
      FinishRun(op.id, outcome.status, outcome.result_json);  // alone, with its retries
      return ended_ms;
    }
    LogFinished(op.id, outcome.status);
    if (!next->has_value()) {
      ResyncDurableQueued(generation, 0);  // the store has nothing queued
      return ended_ms;
    }
    TookQueuedOperation();
    op = **std::move(next);
    busy_since_ms = ended_ms;
  }
}

Executor::DurableOutcome Executor::RunOperation(const Operation& op) {
  auto request = ParseCanonicalRequest(op.request);
  auto server_env = sealer_->Unseal(op.sealed_credentials);
  auto cancel_pipe = os::MakePipe();
  if (!request.ok() || !server_env.ok() || !cancel_pipe.ok()) {
    absl::Status failure = !request.ok()      ? request.status()
                           : !server_env.ok() ? server_env.status()
                                              : cancel_pipe.status();
    return {OperationStatus::kFailed, FailureResult(failure)};
  }
  {
    absl::MutexLock lock(&mu_);
    cancel_fds_[op.id] = cancel_pipe->write_end.get();
  }
  // A cancel that landed between the claim and the registration above.
  if (auto latest = store_->Get(op.id); latest.ok() && latest->cancel_requested) {
    SignalCancel(cancel_pipe->write_end.get());
  }

  sandbox::RunSpec spec = ToRunSpec(*request);
  spec.server_env = std::move(*server_env);
  // One line per program start, naming the runner: what an operator (and the
  // failover test) counts to see that no operation ran twice.
  base::Log(LogLevel::kInfo, "operation.started", op.id, {{"runner", options_.runner_id}});
  auto result = runner_->Run(spec, {.cancel_fd = cancel_pipe->read_end.get()});
  {
    absl::MutexLock lock(&mu_);
    cancel_fds_.erase(op.id);
  }

  if (!result.ok()) {
    base::Log(LogLevel::kError, "operation.sandbox_failure", op.id,
              {{"error", std::string(result.status().message())}});
    return {OperationStatus::kFailed, FailureResult(result.status())};
  }
  metrics_->CountRun(std::string(sandbox::VerdictName(result->verdict)),
                     static_cast<double>(result->wall_ms) / 1000.0);
  const OperationStatus status = result->cancelled       ? OperationStatus::kCancelled
                                 : RunSucceeded(*result) ? OperationStatus::kSucceeded
                                                         : OperationStatus::kFailed;
  return {status, ExecuteResultJson(*result).dump()};
}

void Executor::LogFinished(const std::string& id, OperationStatus status) {
  base::Log(LogLevel::kInfo, "operation.finished", id,
            {{"status", std::string(OperationStatusName(status))}});
}

void Executor::FinishRun(const std::string& id, OperationStatus status, const std::string& result) {
  const absl::Time give_up = absl::Now() + absl::Milliseconds(options_.lease_ms);
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    absl::StatusOr<Operation> finished = store_->Finish(id, status, result, now_());
    if (finished.ok()) return LogFinished(id, status);
    // Unavailable: the store is unreachable (a database restart); Unknown:
    // the commit's fate is unknown, and a retry finds it done or not.
    const bool transient =
        absl::IsUnavailable(finished.status()) || absl::IsUnknown(finished.status());
    if (!transient || absl::Now() + backoff > give_up) {
      base::Log(LogLevel::kError, "operation.finish_failed", id,
                {{"error", std::string(finished.status().message())}});
      return;
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
}

}  // namespace aevatar::chrono
