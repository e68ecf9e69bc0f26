#include "aevatar/runtime/workflow_runtime.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/codex_step_turns.h"
#include "aevatar/runtime/run_turns.h"
#include "aevatar/runtime/turn.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

// What a message to a run actor (not a turn) commits: `run` as the message
// left it, one event, and the run's next callback.
TurnCommit MessageCommit(const RunRecord& run, RunEvent event, std::optional<Callback> next) {
  TurnCommit commit;
  commit.run_id = run.run_id;
  commit.expected_version = run.version;
  commit.phase = run.phase;
  commit.state = run.state;
  commit.events = {std::move(event)};
  commit.next_callback = std::move(next);
  return commit;
}

}  // namespace

WorkflowRuntime::WorkflowRuntime(Options options, WorkflowStore* store, AuditLog* audit,
                                 TransportFactory transports, FactsReader facts, Clock clock)
    : options_(std::move(options)),
      store_(store),
      audit_(audit),
      transports_(std::move(transports)),
      facts_(std::move(facts)),
      clock_(std::move(clock)) {
  if (options_.replica_id.empty()) options_.replica_id = base::RandomId("replica_");
  if (options_.lease_ms < 3) options_.lease_ms = 3;
}

WorkflowRuntime::~WorkflowRuntime() { Stop(); }

absl::Status WorkflowRuntime::GuardedTurn(const Callback& callback, absl::Mutex* run_lock,
                                          int64_t now_ms, std::optional<RunRecord> loaded,
                                          std::optional<CommittedTurn>* committed) {
  committed->reset();
  // A turn must never take the process down: whatever escapes it (a library
  // exception, a bug) becomes an error status handled like any failed turn.
  try {
    TurnDeps deps{store_,
                  audit_,
                  &transports_,
                  &facts_,
                  options_.vault.get(),
                  now_ms,
                  &options_.codex,
                  run_lock,
                  options_.approvals,
                  &options_.private_ssh,
                  &options_.on_run_finished,
                  &options_.agent_keys,
                  &definitions_,
                  committed,
                  &options_.replica_id};
    return ExecuteTurn(deps, callback, std::move(loaded));
  } catch (const std::exception&) {
    return absl::InternalError("the turn raised an exception");
  } catch (...) {
    return absl::InternalError("the turn raised an unknown exception");
  }
}

std::optional<Callback> WorkflowRuntime::NextTurnDueNow(const std::string& run_id,
                                                        const std::optional<Callback>& committed,
                                                        int64_t delivery_started_ms, int64_t now) {
  // The run's lock was held since that commit, and only a message (which
  // waits for it) or another replica (which waits for the lease) changes a
  // run: the committed callback and run are still the run's. The turn checks
  // the callback again, and its commit the run's version.
  if (!committed || committed->due_at_ms > now + kAtOnceMs) return std::nullopt;
  {
    absl::MutexLock state_lock(&mu_);
    if (stopping_ || messages_waiting_.contains(run_id)) return std::nullopt;
  }
  // Within a third of the lease the claim gave: the lease is still this
  // replica's even if no renewal reached the store since.
  if (now - delivery_started_ms >= options_.lease_ms / 3) return std::nullopt;
  return committed;
}

void WorkflowRuntime::Deliver(const Callback& first, int max_turns) {
  LetWaitingMessagesGoFirst(first.run_id);
  RunLockRef run_lock(*this, first.run_id);
  absl::MutexLock lock(run_lock.get());
  const int64_t started_ms = clock_();
  // A turn that schedules the run's next one for now (admission, then the
  // submit; a result, then its audit, then the run's end) is followed at
  // once under the lease this delivery holds: no release, claim and queue
  // between them. Bounded, so one run cannot keep a worker from the others.
  // A turn that follows at once may start in the 1 ms before it is due: it
  // runs at the time it was scheduled for, and the delivery's clock never
  // goes back.
  Callback callback = first;
  int64_t turn_ms = std::max(started_ms, callback.due_at_ms);
  std::optional<CommittedTurn> committed;  // what the last turn committed
  absl::Status status = GuardedTurn(callback, run_lock.get(), turn_ms, std::nullopt, &committed);
  bool progressed = false;  // a turn of this delivery committed
  // A commit that gave the lease up ended the delivery (its next turn was
  // not due at once): another replica may take the run from then on.
  for (int turns = 1; status.ok() && committed && !committed->lease_released && turns < max_turns;
       ++turns) {
    const int64_t now = std::max(clock_(), turn_ms);
    std::optional<Callback> next =
        NextTurnDueNow(callback.run_id, committed->next, started_ms, now);
    if (!next) break;
    callback = *std::move(next);
    progressed = true;
    turn_ms = std::max(now, callback.due_at_ms);
    status = GuardedTurn(callback, run_lock.get(), turn_ms, std::move(committed->run), &committed);
  }
  EndDelivery(
      {callback, status, progressed, status.ok() && committed && committed->lease_released});
}

absl::Status WorkflowRuntime::FailRunTyped(const std::string& run_id,
                                           const std::string& diagnostic_id) {
  try {
    auto run = store_->GetRun(run_id);
    if (!run.ok()) return run.status();
    if (IsTerminalPhase(run->phase)) return absl::OkStatus();
    const int64_t now = clock_();
    if (!run->state.is_object()) run->state = nlohmann::json::object();
    run->state["outcome_code"] = kTurnFailedCode;
    run->state["diagnostic_id"] = diagnostic_id;
    run->state["finished_at_ms"] = now;
    run->state["callback_id"] = nullptr;
    TurnCommit commit;
    commit.run_id = run_id;
    commit.expected_version = run->version;
    commit.phase = "failed";
    commit.state = run->state;
    commit.sealed_deletes = SealedRefsOfRun(run->state);
    commit.events = {{0,
                      run_id,
                      now,
                      "run.failed",
                      {{"outcome_code", kTurnFailedCode}, {"diagnostic_id", diagnostic_id}}}};
    auto committed = store_->CommitTurn(commit);
    if (committed.ok()) {
      base::Log(base::LogLevel::kError, "workflow.run_failed", run_id,
                {{"diagnostic_id", diagnostic_id}, {"category", kTurnFailedCode}});
      if (options_.on_run_finished) {
        options_.on_run_finished("failed", static_cast<double>(now - run->created_at_ms) / 1000.0);
      }
    }
    return committed.status();
  } catch (...) {
    return absl::InternalError("failing the run raised an exception");
  }
}

absl::StatusOr<std::string> WorkflowRuntime::StartRun(const Caller& caller,
                                                      const WorkflowDefinition& definition,
                                                      const nlohmann::json& inputs,
                                                      const nlohmann::json& proof,
                                                      const nlohmann::json& authorization_catalog) {
  if (caller.credential.empty()) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, "CREDENTIAL_MISSING",
                          "a durable run needs a credential for its outbound calls", 401);
  }
  const std::string credential_ref = base::RandomId("cred_");
  // The credential kind (and a key's restriction, which the managed
  // codex_exec steps check) is kept; the credential itself is sealed.
  const nlohmann::json caller_state = {{"kind", CredentialKindName(caller.kind)},
                                       {"credential_ref", credential_ref},
                                       {"allowed_services", caller.allowed_services}};
  return CreateRun(
      caller.user_id, caller_state, definition, inputs, proof, authorization_catalog,
      {{credential_ref, SealJson(*options_.vault, {{"credential", caller.credential}})}});
}

absl::StatusOr<std::string> WorkflowRuntime::StartVaultKeyRun(
    const std::string& owner, const std::vector<std::string>& allowed_services,
    const WorkflowDefinition& definition, const nlohmann::json& inputs, const nlohmann::json& proof,
    const nlohmann::json& authorization_catalog, const nlohmann::json& trigger) {
  if (!options_.agent_keys) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, kAgentKeyMissingCode,
                          "this aevatar has no vault of Agent Keys for unattended runs");
  }
  // Nothing is sealed: each outbound call resolves the key again
  // (LoadCredential), so a key replaced or revoked in the vault takes effect
  // at the run's next call.
  const nlohmann::json caller_state = {{"kind", CredentialKindName(CredentialKind::kAgentKey)},
                                       {"credential_source", "vault"},
                                       {"owner", owner},
                                       {"allowed_services", allowed_services},
                                       {"trigger", trigger}};
  return CreateRun(owner, caller_state, definition, inputs, proof, authorization_catalog, {});
}

absl::StatusOr<std::string> WorkflowRuntime::RecordFailedStart(const std::string& owner,
                                                               const std::string& workflow_id,
                                                               const std::string& outcome_code,
                                                               const std::string& diagnostic_id,
                                                               const nlohmann::json& trigger) {
  const int64_t now = clock_();
  RunRecord run;
  run.run_id = base::RandomId("run_");
  run.owner = owner;
  run.workflow_id = workflow_id;
  run.phase = "running";
  run.created_at_ms = now;
  run.state = {{"workflow_id", workflow_id},
               {"caller",
                {{"kind", CredentialKindName(CredentialKind::kAgentKey)},
                 {"credential_source", "vault"},
                 {"owner", owner},
                 {"trigger", trigger}}},
               {"steps", nlohmann::json::array()},
               {"step_index", 0},
               {"pending", nullptr},
               {"stop", nullptr},
               {"audit_intent", nullptr},
               {"callback_id", nullptr},
               {"started_at_ms", now}};
  RunEvent first{0, run.run_id, now, "run.started", {{"workflow_id", workflow_id}}};
  // Created with a callback far in the future and failed in the next commit,
  // which removes it: the run is never delivered.
  const std::string callback_id = base::RandomId("cb_");
  if (auto st = store_->CreateRun(
          run, first, Callback{callback_id, run.run_id, std::numeric_limits<int64_t>::max() / 2},
          {});
      !st.ok()) {
    return st;
  }
  run.version = 1;
  auto stored = store_->GetRun(run.run_id);
  if (!stored.ok()) return stored.status();
  stored->state["outcome_code"] = outcome_code;
  stored->state["diagnostic_id"] = diagnostic_id;
  stored->state["finished_at_ms"] = now;
  TurnCommit commit;
  commit.run_id = run.run_id;
  commit.expected_version = stored->version;
  commit.phase = "failed";
  commit.state = stored->state;
  commit.events = {{0,
                    run.run_id,
                    now,
                    "run.failed",
                    {{"outcome_code", outcome_code}, {"diagnostic_id", diagnostic_id}}}};
  auto committed = store_->CommitTurn(commit);
  if (!committed.ok()) return committed.status();
  if (options_.on_run_finished) options_.on_run_finished("failed", 0.0);
  return run.run_id;
}

absl::StatusOr<std::string> WorkflowRuntime::CreateRun(
    const std::string& owner, const nlohmann::json& caller_state,
    const WorkflowDefinition& definition, const nlohmann::json& inputs, const nlohmann::json& proof,
    const nlohmann::json& authorization_catalog,
    std::vector<std::pair<std::string, std::string>> sealed) {
  auto route = SealedRoute(proof);
  if (!route.ok()) return route.status();
  // The catalog is NyxID's word, the proof aevatar's: a run starts only when
  // both name the same exact route.
  if (std::string denied = CheckGrant(authorization_catalog, *route); !denied.empty()) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, absl::AsciiStrToUpper(denied),
                          "the authorization catalog does not grant the admitted route");
  }
  const int64_t now = clock_();
  RunRecord run;
  run.run_id = base::RandomId("run_");
  run.owner = owner;
  run.workflow_id = definition.workflow_id;
  run.phase = "running";
  run.created_at_ms = now;
  const std::string definition_ref = base::RandomId("def_");
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
      {"caller", caller_state},
      {"proof", proof},
      {"authorization_catalog", authorization_catalog},
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
  sealed.push_back({definition_ref, SealJson(*options_.vault, WorkflowToJson(definition))});
  if (auto st = store_->CreateRun(run, first, Callback{callback_id, run.run_id, now}, sealed);
      !st.ok()) {
    return st;
  }
  Poke();
  return run.run_id;
}

template <typename T>
absl::StatusOr<T> WorkflowRuntime::DeliverMessage(
    const std::string& run_id, const std::function<absl::StatusOr<T>()>& locked) {
  RunLockRef run_lock(*this, run_id);
  const int64_t ticket = MessageArrives(run_id);
  absl::MutexLock lock(run_lock.get());
  MessageHoldsLock(run_id, ticket);
  // Aborted: a turn on another replica committed in between (up to 8 at
  // once, a chain of turns that follow at once), so the message reads the
  // run again after a pause, 20 ms doubling to 200 ms, at most 8 times
  // (about 0.9 s).
  absl::StatusOr<T> result = locked();
  for (int attempt = 1; attempt < 8 && absl::IsAborted(result.status()); ++attempt) {
    absl::SleepFor(absl::Milliseconds(std::min(10 << attempt, 200)));
    result = locked();
  }
  return result;
}

absl::StatusOr<int> WorkflowRuntime::ObserveNyxidFacts(const std::string& owner,
                                                       const NyxidFacts& facts) {
  if (facts.caller.user_id != owner) {
    return absl::InvalidArgumentError("the facts describe another caller");
  }
  auto runs = store_->LiveRunsOf(owner);
  if (!runs.ok()) return runs.status();
  int changed = 0;
  for (const std::string& run_id : *runs) {
    const absl::StatusOr<bool> revoked =
        DeliverMessage<bool>(run_id, [&] { return ObserveFactsLocked(run_id, facts); });
    if (!revoked.ok()) return revoked.status();
    if (*revoked) ++changed;
  }
  return changed;
}

absl::StatusOr<bool> WorkflowRuntime::ObserveFactsLocked(const std::string& run_id,
                                                         const NyxidFacts& facts) {
  auto run = store_->GetRun(run_id);
  if (!run.ok()) return run.status();
  if (IsTerminalPhase(run->phase) || !run->state.is_object()) return false;
  nlohmann::json catalog = run->state["authorization_catalog"];
  const int64_t now = clock_();
  if (ApplyFacts(catalog, facts, kRevokedByObservedFacts, now) == 0) return false;
  auto callback = store_->CallbackOf(run_id);  // the run keeps its next callback
  if (!callback.ok()) return callback.status();
  run->state["authorization_catalog"] = catalog;
  auto committed = store_->CommitTurn(MessageCommit(
      *run, {0, run_id, now, "catalog.revoked", {{"source", kRevokedByObservedFacts}}}, *callback));
  if (!committed.ok()) return committed.status();
  return true;
}

absl::StatusOr<int64_t> WorkflowRuntime::RequestStop(const std::string& run_id,
                                                     const std::string& owner) {
  std::optional<CodexStepCancel> codex;
  const absl::StatusOr<int64_t> deadline =
      DeliverMessage<int64_t>(run_id, [&] { return RequestStopLocked(run_id, owner, &codex); });
  // The stop is durable now; the kill is best effort (a cancel that is not
  // accepted leaves the stop to wait for the run's own end, as before).
  if (deadline.ok() && codex && options_.codex_cancel) {
    (void)options_.codex_cancel(owner, codex->idempotency_key, base::RandomId("diag_"),
                                codex->caller_services);
  }
  return deadline;
}

absl::StatusOr<int64_t> WorkflowRuntime::RequestStopLocked(const std::string& run_id,
                                                           const std::string& owner,
                                                           std::optional<CodexStepCancel>* codex) {
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
  auto committed = store_->CommitTurn(
      MessageCommit(*run, {0, run_id, now, "run.stop_requested", {{"deadline_unix_ms", deadline}}},
                    Callback{callback_id, run_id, now + 1}));
  if (!committed.ok()) return committed.status();
  TurnDeps deps{store_, audit_, &transports_, &facts_, options_.vault.get(), now};
  *codex = RunningCodexStep(deps, run->state);
  Poke();
  return deadline;
}

}  // namespace aevatar::orchestrator
