#include "aevatar/runtime/workflow_runtime.h"

#include <chrono>

#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/run_turns.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/log.h"

namespace aevatar::orchestrator {

WorkflowRuntime::WorkflowRuntime(Options options, WorkflowStore* store, AuditLog* audit,
                                 TransportFactory transports, const NyxidClient* nyxid, Clock clock)
    : options_(std::move(options)),
      store_(store),
      audit_(audit),
      transports_(std::move(transports)),
      nyxid_(nyxid),
      clock_(std::move(clock)) {}

WorkflowRuntime::~WorkflowRuntime() { Stop(); }

void WorkflowRuntime::Start() {
  threads_.emplace_back([this] { DispatchLoop(); });
  for (int i = 0; i < options_.workers; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        Callback callback;
        {
          std::unique_lock lock(mu_);
          wake_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
          if (stopping_) return;
          callback = ready_.back();
          ready_.pop_back();
        }
        Deliver(callback);
      }
    });
  }
}

void WorkflowRuntime::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

std::shared_ptr<std::mutex> WorkflowRuntime::RunLock(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto& slot = run_locks_[run_id];
  if (!slot) slot = std::make_shared<std::mutex>();
  return slot;
}

void WorkflowRuntime::DispatchLoop() {
  std::map<std::string, int64_t> backoff_until;  // run -> retry time after a failed turn
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                     [this] { return stopping_; });
      if (stopping_) return;
    }
    const int64_t now = clock_();
    auto due = store_->DueCallbacks(now, 64);
    if (!due.ok()) {
      base::Log(base::LogLevel::kError, "workflow.dispatch_failed", "",
                {{"error", std::string(due.status().message())}});
      continue;
    }
    std::lock_guard lock(mu_);
    for (const Callback& callback : *due) {
      if (in_flight_.count(callback.run_id)) continue;
      if (auto it = backoff_until.find(callback.run_id);
          it != backoff_until.end() && it->second > now) {
        continue;
      }
      backoff_until.erase(callback.run_id);
      in_flight_.insert(callback.run_id);
      ready_.push_back(callback);
    }
    wake_.notify_all();
    // Failed turns leave their callback due; space their retries out.
    for (const auto& [run_id, until] : failed_turns_) backoff_until[run_id] = until;
    failed_turns_.clear();
  }
}

void WorkflowRuntime::Deliver(const Callback& callback) {
  auto run_lock = RunLock(callback.run_id);
  absl::Status status;
  {
    std::lock_guard lock(*run_lock);
    TurnDeps deps{store_, audit_, &transports_, nyxid_, options_.vault_key, clock_()};
    status = ExecuteTurn(deps, callback);
  }
  std::lock_guard lock(mu_);
  in_flight_.erase(callback.run_id);
  if (!status.ok()) {
    base::Log(base::LogLevel::kWarn, "workflow.turn_failed", callback.run_id,
              {{"code", base::ApiCode(status)}});
    failed_turns_[callback.run_id] = clock_() + 1000;
  }
}

void WorkflowRuntime::DrainDueForTest() {
  for (int round = 0; round < 1000; ++round) {
    auto due = store_->DueCallbacks(clock_(), 64);
    if (!due.ok() || due->empty()) return;
    for (const Callback& callback : *due) Deliver(callback);
  }
}

absl::StatusOr<std::string> WorkflowRuntime::StartRun(const Caller& caller,
                                                      const WorkflowDefinition& definition,
                                                      const nlohmann::json& inputs,
                                                      const nlohmann::json& proof) {
  auto route = SealedRoute(proof);
  if (!route.ok()) return route.status();
  if (caller.credential.empty()) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, "CREDENTIAL_MISSING",
                          "a durable run needs a credential for its outbound calls", 401);
  }
  const int64_t now = clock_();
  RunRecord run;
  run.run_id = base::RandomId("run_");
  run.owner = caller.user_id;
  run.workflow_id = definition.workflow_id;
  run.phase = "running";
  run.created_at_ms = now;
  const std::string definition_ref = base::RandomId("def_");
  const std::string credential_ref = base::RandomId("cred_");
  nlohmann::json steps = nlohmann::json::array();
  for (const WorkflowStep& step : definition.steps) {
    steps.push_back({{"id", step.id}, {"tool", step.tool}, {"status", "pending"}});
  }
  const std::string callback_id = base::RandomId("cb_");
  run.state = {
      {"workflow_id", definition.workflow_id},
      {"definition_ref", definition_ref},
      {"definition_digest", definition.digest},
      {"inputs", inputs},
      // The credential kind is kept; the credential itself is sealed.
      {"caller", {{"kind", CredentialKindName(caller.kind)}, {"credential_ref", credential_ref}}},
      {"proof", proof},
      {"authorization_catalog", CatalogFor(*route)},
      {"step_index", 0},
      {"steps", steps},
      {"step_outputs", nlohmann::json::object()},
      {"pending", nullptr},
      {"stop", nullptr},
      {"audit_intent", nullptr},
      {"callback_id", callback_id},
      {"started_at_ms", now},
  };
  RunEvent first{0, run.run_id, now, "run.started", {{"workflow_id", definition.workflow_id}}};
  // The protected material is committed with the run that references it.
  const std::vector<std::pair<std::string, std::string>> sealed = {
      {definition_ref, SealJson(options_.vault_key, WorkflowToJson(definition))},
      {credential_ref, SealJson(options_.vault_key, {{"credential", caller.credential}})}};
  if (auto st = store_->CreateRun(run, first, Callback{callback_id, run.run_id, now}, sealed);
      !st.ok()) {
    return st;
  }
  wake_.notify_all();
  return run.run_id;
}

absl::StatusOr<int64_t> WorkflowRuntime::RequestStop(const std::string& run_id,
                                                     const std::string& owner) {
  auto run_lock = RunLock(run_id);
  std::lock_guard lock(*run_lock);
  auto run = store_->GetRun(run_id);
  if (!run.ok()) return run.status();
  if (run->owner != owner) {
    return base::ApiError(absl::StatusCode::kNotFound, "RUN_NOT_FOUND",
                          "no such workflow run for this caller");
  }
  nlohmann::json& stop = run->state["stop"];
  if (stop.is_object()) return stop.value("deadline_unix_ms", int64_t{0});  // redelivery
  if (IsTerminalPhase(run->phase)) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "RUN_FINISHED",
                          "the run has already finished");
  }
  const int64_t now = clock_();
  const int64_t deadline = now + options_.stop_window_ms;
  stop = {{"deadline_unix_ms", deadline}, {"requested_at_ms", now}};
  const std::string callback_id = base::RandomId("cb_");
  run->state["callback_id"] = callback_id;
  TurnCommit commit;
  commit.run_id = run_id;
  commit.expected_version = run->version;
  commit.phase = run->phase;
  commit.state = run->state;
  commit.events = {{0, run_id, now, "run.stop_requested", {{"deadline_unix_ms", deadline}}}};
  commit.next_callback = Callback{callback_id, run_id, now + 1};
  if (auto committed = store_->CommitTurn(commit); !committed.ok()) return committed.status();
  wake_.notify_all();
  return deadline;
}

}  // namespace aevatar::orchestrator
