#include "chrono/executor.h"

#include <unistd.h>

#include <chrono>
#include <future>

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
constexpr auto kIdlePoll = std::chrono::seconds(1);

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::Status QueueFull() {
  return base::ApiError(absl::StatusCode::kResourceExhausted, "QUEUE_FULL",
                        "the execution queue is full; retry after the Retry-After delay", 429);
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

}  // namespace

Executor::Executor(ExecutorOptions options, sandbox::Engine* engine, OperationStore* store,
                   const CredentialSealer* sealer, Metrics* metrics)
    : options_(std::move(options)),
      engine_(engine),
      store_(store),
      sealer_(sealer),
      metrics_(metrics) {}

Executor::~Executor() { Stop(); }

absl::Status Executor::Start() {
  auto uncertain = store_->MarkRunningUncertain("", NowMs());
  if (!uncertain.ok()) return uncertain.status();
  if (*uncertain > 0) {
    base::Log(LogLevel::kWarn, "operations.outcome_uncertain", "", {{"count", *uncertain}});
  }
  auto queued = store_->CountWithStatus(OperationStatus::kQueued);
  if (!queued.ok()) return queued.status();
  {
    std::lock_guard lock(mu_);
    durable_queued_ = *queued;
  }
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
  return absl::OkStatus();
}

void Executor::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

absl::Status Executor::AdmitOne() {
  if (stopping_) {
    return base::ApiError(absl::StatusCode::kUnavailable, "SHUTTING_DOWN",
                          "the executor is shutting down", 503);
  }
  if (static_cast<int64_t>(sync_jobs_.size()) + durable_queued_ >= options_.queue_depth) {
    return QueueFull();
  }
  return absl::OkStatus();
}

absl::StatusOr<sandbox::RunResult> Executor::RunSync(sandbox::RunSpec spec) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<sandbox::RunResult>>>();
  auto future = promise->get_future();
  {
    std::lock_guard lock(mu_);
    if (absl::Status st = AdmitOne(); !st.ok()) return st;
    sync_jobs_.push_back(
        [this, promise, spec = std::move(spec)] { promise->set_value(engine_->Run(spec)); });
  }
  wake_.notify_one();
  return future.get();
}

absl::StatusOr<CreateOutcome> Executor::Submit(const Operation& op) {
  std::lock_guard lock(mu_);
  if (absl::Status st = AdmitOne(); !st.ok()) return st;
  auto outcome = store_->CreateOrGet(op);
  if (!outcome.ok()) return outcome.status();
  if (outcome->created) {
    ++durable_queued_;
    wake_.notify_one();
  }
  return outcome;
}

absl::StatusOr<Operation> Executor::Cancel(const std::string& id) {
  auto op = store_->RequestCancel(id, NowMs());
  if (!op.ok()) return op.status();
  std::lock_guard lock(mu_);
  if (op->status == OperationStatus::kCancelled && durable_queued_ > 0 && op->started_at_ms == 0) {
    --durable_queued_;  // cancelled while still queued
  }
  if (auto it = cancel_fds_.find(id); it != cancel_fds_.end()) {
    [[maybe_unused]] ssize_t n = ::write(it->second, "x", 1);
  }
  return op;
}

int64_t Executor::queued() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(sync_jobs_.size()) + durable_queued_;
}

int64_t Executor::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void Executor::WorkerLoop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kIdlePoll,
                     [this] { return stopping_ || !sync_jobs_.empty() || durable_queued_ > 0; });
      if (stopping_) return;
      if (!sync_jobs_.empty()) {
        job = std::move(sync_jobs_.front());
        sync_jobs_.pop_front();
      }
      ++running_;
    }
    if (job) {
      job();
    } else {
      auto claimed = store_->ClaimNext(options_.runner_id, NowMs());
      if (!claimed.ok()) {
        base::Log(LogLevel::kError, "operations.claim_failed", "",
                  {{"error", std::string(claimed.status().message())}});
      } else if (claimed->has_value()) {
        {
          std::lock_guard lock(mu_);
          if (durable_queued_ > 0) --durable_queued_;
        }
        RunOperation(**claimed);
      } else {
        std::lock_guard lock(mu_);
        durable_queued_ = 0;  // the store has nothing queued: resync the counter
      }
    }
    std::lock_guard lock(mu_);
    --running_;
  }
}

void Executor::RunOperation(const Operation& op) {
  auto request = ParseCanonicalRequest(op.request);
  auto server_env = sealer_->Unseal(op.sealed_credentials);
  auto cancel_pipe = os::MakePipe();
  if (!request.ok() || !server_env.ok() || !cancel_pipe.ok()) {
    absl::Status failure = !request.ok()      ? request.status()
                           : !server_env.ok() ? server_env.status()
                                              : cancel_pipe.status();
    (void)store_->Finish(op.id, OperationStatus::kFailed, FailureResult(failure), NowMs());
    return;
  }
  {
    std::lock_guard lock(mu_);
    cancel_fds_[op.id] = cancel_pipe->write_end.get();
  }
  // A cancel that landed between the claim and the registration above.
  if (auto latest = store_->Get(op.id); latest.ok() && latest->cancel_requested) {
    [[maybe_unused]] ssize_t n = ::write(cancel_pipe->write_end.get(), "x", 1);
  }

  sandbox::RunSpec spec = ToRunSpec(*request);
  spec.server_env = std::move(*server_env);
  auto result = engine_->Run(spec, {.cancel_fd = cancel_pipe->read_end.get()});
  {
    std::lock_guard lock(mu_);
    cancel_fds_.erase(op.id);
  }

  OperationStatus status = OperationStatus::kFailed;
  std::string result_json;
  if (!result.ok()) {
    base::Log(LogLevel::kError, "operation.sandbox_failure", op.id,
              {{"error", std::string(result.status().message())}});
    result_json = FailureResult(result.status());
  } else {
    status = result->cancelled       ? OperationStatus::kCancelled
             : RunSucceeded(*result) ? OperationStatus::kSucceeded
                                     : OperationStatus::kFailed;
    result_json = ExecuteResultJson(*result).dump();
    metrics_->CountRun(std::string(sandbox::VerdictName(result->verdict)),
                       static_cast<double>(result->wall_ms) / 1000.0);
  }
  auto finished = store_->Finish(op.id, status, result_json, NowMs());
  if (!finished.ok()) {
    base::Log(LogLevel::kError, "operation.finish_failed", op.id,
              {{"error", std::string(finished.status().message())}});
    return;
  }
  base::Log(LogLevel::kInfo, "operation.finished", op.id,
            {{"status", std::string(OperationStatusName(status))}});
}

}  // namespace aevatar::chrono
