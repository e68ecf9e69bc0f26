#include "aevatar/runtime/run_turns.h"

#include <algorithm>
#include <chrono>

#include "aevatar/admission/admission_proof.h"
#include "aevatar/clients/nyxid_route_writer.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/tools/code_execute.h"
#include "aevatar/workflow/workflow_expect.h"
#include "aevatar/workflow/workflow_template.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// A turn under construction: the loaded run plus what it will commit.
struct Turn {
  RunRecord run;
  json& state() { return run.state; }
  std::vector<RunEvent> events;
  std::vector<std::pair<std::string, std::string>> sealed_puts;
  std::optional<int64_t> next_due_ms;  // nullopt: no further callback
};

void AddEvent(Turn& turn, int64_t now, std::string type, json data) {
  turn.events.push_back({0, turn.run.run_id, now, std::move(type), std::move(data)});
}

absl::Status Commit(const TurnDeps& deps, Turn& turn) {
  TurnCommit commit;
  commit.run_id = turn.run.run_id;
  commit.expected_version = turn.run.version;
  commit.phase = turn.run.phase;
  commit.events = std::move(turn.events);
  commit.sealed_puts = std::move(turn.sealed_puts);
  if (turn.next_due_ms) {
    // The next callback's identity is saved with the state before it is scheduled.
    const std::string callback_id = base::RandomId("cb_");
    turn.state()["callback_id"] = callback_id;
    commit.next_callback = Callback{callback_id, turn.run.run_id, *turn.next_due_ms};
  } else {
    turn.state()["callback_id"] = nullptr;
  }
  commit.state = turn.state();
  auto committed = deps.store->CommitTurn(commit);
  return committed.status();
}

// Schedules the next turn `delay_ms` from now; before a stop deadline the
// delay is shortened to it, and it is never below 1 ms (a due callback still
// needs a positive delay).
void ScheduleIn(Turn& turn, int64_t now, int64_t delay_ms) {
  const json& stop = turn.state()["stop"];
  if (stop.is_object()) {
    const int64_t deadline = stop.value("deadline_unix_ms", int64_t{0});
    if (now < deadline) delay_ms = std::min(delay_ms, deadline - now);
  }
  turn.next_due_ms = now + std::max<int64_t>(1, delay_ms);
}

void FinishRun(Turn& turn, int64_t now, const std::string& phase, const std::string& outcome) {
  turn.run.phase = phase;
  turn.state()["finished_at_ms"] = now;
  if (!outcome.empty()) turn.state()["outcome_code"] = outcome;
  AddEvent(turn, now, "run." + phase, {{"outcome_code", outcome}});
  turn.next_due_ms.reset();
}

// The audit record of a tool call of this run, in its persisted (frozen) form.
json ToolAuditJson(const Turn& turn, const std::string& kind, const std::string& step_id,
                   const std::string& causation_id, json fact, int64_t now) {
  return {{"kind", kind},
          {"run_id", turn.run.run_id},
          {"workflow_id", turn.run.workflow_id},
          {"step_id", step_id},
          {"call_id", turn.run.run_id + "/" + step_id},
          {"correlation_id", turn.run.run_id},
          {"causation_id", causation_id},
          {"fact", std::move(fact)},
          {"occurred_at_ms", now}};
}

// Freezes the audit intent of a terminal tool outcome and enters
// finalizing_audit; `then` says what follows once the audit is written.
void FreezeAuditIntent(Turn& turn, int64_t now, const std::string& step_id, json fact,
                       const std::string& then) {
  json& state = turn.state();
  if (state["audit_intent"].is_object()) return;  // a frozen intent is immutable
  state["audit_intent"] = {
      {"record", ToolAuditJson(turn, "tool.terminal", step_id, state.value("callback_id", ""),
                               std::move(fact), now)},
      {"then", then},
      {"attempts", 0}};
  turn.run.phase = "finalizing_audit";
  AddEvent(turn, now, "audit.frozen", {{"step_id", step_id}, {"then", then}});
  ScheduleIn(turn, now, 1);
}

AuditRecord RecordFromJson(const json& frozen) {
  AuditRecord record;
  record.kind = frozen.value("kind", "");
  record.run_id = frozen.value("run_id", "");
  record.workflow_id = frozen.value("workflow_id", "");
  record.step_id = frozen.value("step_id", "");
  record.call_id = frozen.value("call_id", "");
  record.correlation_id = frozen.value("correlation_id", "");
  record.causation_id = frozen.value("causation_id", "");
  record.fact = frozen["fact"];
  record.occurred_at_ms = frozen.value("occurred_at_ms", int64_t{0});
  record.trace.trace_id = base::RandomId("tr_");  // delivery tracing differs per replay
  return record;
}

// The running audit of a submitted operation. When the audit store cannot
// take it now it is kept in the state and written before the terminal one.
void AppendRunningAudit(const TurnDeps& deps, Turn& turn, const std::string& step_id,
                        const std::string& operation_id) {
  const json frozen =
      ToolAuditJson(turn, "tool.running", step_id, "",
                    {{"status", "running"}, {"provider_operation_id", operation_id}}, deps.now_ms);
  auto appended = deps.audit->Append(RecordFromJson(frozen));
  if (!appended.ok()) turn.state()["running_audit_pending"] = frozen;
}

json& CurrentStep(Turn& turn) {
  json& state = turn.state();
  return state["steps"][state.value("step_index", 0)];
}

absl::StatusOr<WorkflowDefinition> LoadDefinition(const TurnDeps& deps, const json& state) {
  auto sealed = deps.store->GetSealed(state.value("definition_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto definition = UnsealJson(deps.vault_key, *sealed);
  if (!definition.ok()) return definition.status();
  return WorkflowFromJson(*definition);
}

absl::StatusOr<std::string> LoadCredential(const TurnDeps& deps, const json& state) {
  auto sealed = deps.store->GetSealed(state["caller"].value("credential_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto credential = UnsealJson(deps.vault_key, *sealed);
  if (!credential.ok()) return credential.status();
  return credential->value("credential", "");
}

// Runtime credential rules: a source-readable (human) credential re-reads
// the inventory; a 401 continues on the sealed exact id; a 403 or a route
// that is gone or inactive fails closed. Delegation-only and Agent Key runs
// never re-read. Returns an outcome code to fail with, or "".
std::string RuntimeRouteCheck(const TurnDeps& deps, const json& state, const AdmittedRoute& route,
                              const std::string& credential) {
  if (deps.nyxid == nullptr || state["caller"].value("kind", "") != "HumanBearer") return "";
  NyxidReply reply = deps.nyxid->GetKeys(credential);
  if (reply.status == 401) return "";  // expired during a long run: the proof seals the id
  if (reply.status == 403) return "code_execution_route_access_denied";
  if (reply.status != 200) return "";  // transport trouble: NyxID re-checks on the proxy call
  auto inventory = ParseKeysInventory(reply.body);
  if (!inventory.ok()) return "";
  for (const RouteFacts& facts : *inventory) {
    if (facts.id == route.user_service_id) {
      return facts.active && facts.catalog_service_id == route.catalog_service_id
                 ? ""
                 : "code_execution_route_inactive";
    }
  }
  return "code_execution_route_denied";
}

// Starts the current step: renders its arguments, seals the operation's
// material, and commits the pending operation before any exchange.
absl::Status StartStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  const int index = state.value("step_index", 0);
  if (index >= static_cast<int>(definition.steps.size())) {
    bool all_ok = std::all_of(state["steps"].begin(), state["steps"].end(),
                              [](const json& s) { return s.value("status", "") == "succeeded"; });
    FinishRun(turn, deps.now_ms, all_ok ? "succeeded" : "failed", all_ok ? "" : "step_failed");
    return Commit(deps, turn);
  }
  const WorkflowStep& step = definition.steps[index];
  json& step_state = CurrentStep(turn);
  step_state["started_at_ms"] = deps.now_ms;
  auto fail_step = [&](const std::string& code) {
    step_state["status"] = "failed";
    step_state["outcome_code"] = code;
    step_state["finished_at_ms"] = deps.now_ms;
    FreezeAuditIntent(turn, deps.now_ms, step.id, {{"outcome", code}}, "fail_run");
    return Commit(deps, turn);
  };
  auto route = SealedRoute(state["proof"]);
  if (!route.ok() || !CatalogGrants(state["authorization_catalog"], *route)) {
    return fail_step("code_execution_admission_proof_invalid");
  }
  auto arguments = RenderStepArguments(step, state["inputs"], state["step_outputs"]);
  if (!arguments.ok()) return fail_step("workflow_arguments_invalid");
  auto credential = LoadCredential(deps, state);
  if (!credential.ok()) return credential.status();
  if (std::string denied = RuntimeRouteCheck(deps, state, *route, *credential); !denied.empty()) {
    return fail_step(denied);
  }
  auto args = ParseCodeExecuteArgs(arguments->dump());
  if (!args.ok()) return fail_step("workflow_arguments_invalid");
  const json material = {
      {"idempotency_key", OperationIdentity(turn.run.run_id, step.id,
                                            state.value("definition_digest", ""), *arguments)},
      {"body", ExecutorRequestBody(*args)}};
  const std::string ref = base::RandomId("mat_");
  turn.sealed_puts.push_back({ref, SealJson(deps.vault_key, material)});
  state["pending"] = {{"step_id", step.id},
                      {"material_ref", ref},
                      {"material_digest", "sha256:" + base::Sha256Hex(material.dump())},
                      {"operation", PendingOperation{}.ToJson()}};
  step_state["status"] = "admitted";
  AddEvent(turn, deps.now_ms, "step.admitted", {{"step_id", step.id}, {"index", index}});
  ScheduleIn(turn, deps.now_ms, 1);
  return Commit(deps, turn);
}

// The step's output from a normalized result (ExecutionResult::ToJson), or
// from nothing for a terminal outcome without a result.
json StepOutput(const json& result, const std::string& status) {
  std::string stdout_text = base::StringOr(result, "stdout", "");
  std::string trimmed = stdout_text;
  trimmed.erase(0, trimmed.find_first_not_of(" \t\r\n"));
  trimmed.erase(trimmed.find_last_not_of(" \t\r\n") + 1);
  const auto exit_code = base::OptionalInt(result, "exit_code");
  return {{"stdout", stdout_text},
          {"stderr", base::StringOr(result, "stderr", "")},
          {"exit_code", exit_code.ok() && *exit_code ? json(**exit_code) : json(nullptr)},
          {"status", status},
          {"trimmed_output", trimmed}};
}

// Gives a failed step a diagnostic id and writes the one log line that
// explains it: the id, the typed category and a bounded detail that names
// fields and HTTP statuses only (never source, keys, credentials or route ids).
void DiagnoseFailure(const Turn& turn, json& step_state, const std::string& code,
                     const std::string& detail) {
  const std::string diagnostic_id = http::NewDiagnosticId();
  step_state["diagnostic_id"] = diagnostic_id;
  base::Log(base::LogLevel::kWarn, "workflow.step_failed", turn.run.run_id,
            {{"diagnostic_id", diagnostic_id},
             {"category", code},
             {"step_id", base::StringOr(step_state, "id", "")},
             {"detail", detail}});
}

// Applies a completed or terminal provider outcome to the current step.
void CompleteStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition,
                  const TurnDecision& decision, bool stopping) {
  json& state = turn.state();
  const WorkflowStep& step = definition.steps[state.value("step_index", 0)];
  json& step_state = CurrentStep(turn);
  std::string status;
  json output;
  if (decision.kind == TurnKind::kCompleted) {
    status = base::StringOr(decision.result, "status", "failed");
    output = StepOutput(decision.result, status);
    if (step.expect) {
      ExpectationResult check = EvaluateExpectation(*step.expect, output);
      if (!check.passed) {
        status = "failed";
        step_state["expectation_failures"] = check.failures;
      }
    }
    if (status != "succeeded") step_state["outcome_code"] = "code_execution_step_failed";
  } else {
    status = "failed";
    output = StepOutput(json::object(), decision.outcome_code);
    step_state["outcome_code"] = decision.outcome_code;
    DiagnoseFailure(turn, step_state, decision.outcome_code, decision.detail);
  }
  step_state["status"] = status;
  step_state["output"] = output;
  step_state["finished_at_ms"] = deps.now_ms;
  state["step_outputs"][step.id] = output;
  // The pending operation is replaced by the completion in the same commit.
  const std::string operation_id = state["pending"]["operation"].value("provider_operation_id", "");
  state["pending"] = nullptr;
  AddEvent(turn, deps.now_ms, "step.completed",
           {{"step_id", step.id},
            {"status", status},
            {"outcome_code", step_state.value("outcome_code", "")}});
  json fact = {{"outcome", decision.kind == TurnKind::kCompleted ? status : decision.outcome_code},
               {"provider_operation_id", operation_id}};
  if (output.contains("exit_code")) fact["exit_code"] = output["exit_code"];
  std::string then = stopping ? "stopped" : (status == "succeeded" ? "next_step" : "fail_run");
  FreezeAuditIntent(turn, deps.now_ms, step.id, fact, then);
}

absl::Status ProgressStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  json& pending = state["pending"];
  auto sealed = deps.store->GetSealed(pending.value("material_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto material = UnsealJson(deps.vault_key, *sealed);
  if (!material.ok()) return material.status();
  if ("sha256:" + base::Sha256Hex(material->dump()) != pending.value("material_digest", "")) {
    return absl::DataLossError("the protected material does not match its digest");
  }
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  auto credential = LoadCredential(deps, state);
  if (!credential.ok()) return credential.status();
  auto route = SealedRoute(state["proof"]);
  if (!route.ok()) return route.status();
  auto transport = (*deps.transports)(*route, *credential);
  const bool had_receipt = !operation->provider_operation_id.empty();
  const auto started = std::chrono::steady_clock::now();
  TurnDecision decision = RunTurn(*transport, (*material)["idempotency_key"], (*material)["body"],
                                  *operation, deps.now_ms);
  // How long this turn's exchanges took: each is bounded, and the run's
  // events show it.
  const int64_t took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count();
  AddEvent(turn, deps.now_ms, "exchange",
           {{"step_id", pending.value("step_id", "")},
            {"exchanges", decision.exchanges},
            {"ms", took_ms},
            {"status", decision.pending.last_status}});
  if (decision.kind == TurnKind::kReschedule) {
    pending["operation"] = decision.pending.ToJson();
    if (!had_receipt && !decision.pending.provider_operation_id.empty()) {
      CurrentStep(turn)["status"] = "submitted";
      AppendRunningAudit(deps, turn, pending.value("step_id", ""),
                         decision.pending.provider_operation_id);
      AddEvent(turn, deps.now_ms, "step.submitted",
               {{"step_id", pending.value("step_id", "")},
                {"operation_id", decision.pending.provider_operation_id}});
    } else if (decision.pending.last_status == "running") {
      CurrentStep(turn)["status"] = "running";
    }
    ScheduleIn(turn, deps.now_ms, decision.delay_ms);
    return Commit(deps, turn);
  }
  CompleteStep(deps, turn, definition, decision, state["stop"].is_object());
  return Commit(deps, turn);
}

// Stop cancellation: before the frozen deadline, one cancel exchange carrying
// it; a real terminal outcome wins; past the deadline nothing new starts and
// code_execution_cancel_outcome_uncertain is frozen.
absl::Status StopStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  const int64_t deadline = state["stop"].value("deadline_unix_ms", int64_t{0});
  const json& pending = state["pending"];
  const std::string step_id = pending.is_object() ? pending.value("step_id", "") : "";
  auto freeze = [&](const std::string& outcome) {
    if (pending.is_object()) {
      json& step_state = CurrentStep(turn);
      step_state["status"] = "cancelled";
      step_state["outcome_code"] = outcome;
      step_state["finished_at_ms"] = deps.now_ms;
      turn.state()["pending"] = nullptr;
    }
    FreezeAuditIntent(turn, deps.now_ms, step_id.empty() ? "-" : step_id,
                      {{"outcome", outcome}, {"stop_deadline_unix_ms", deadline}}, "stopped");
    return Commit(deps, turn);
  };
  if (!pending.is_object()) return freeze("workflow_stopped");
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  if (operation->provider_operation_id.empty() && operation->attempts == 0) {
    return freeze("code_execution_cancelled_before_submit");
  }
  if (deps.now_ms >= deadline) return freeze("code_execution_cancel_outcome_uncertain");
  if (operation->provider_operation_id.empty()) {
    return ProgressStep(deps, turn, definition);  // same-key replay learns the id
  }
  auto credential = LoadCredential(deps, state);
  if (!credential.ok()) return credential.status();
  auto route = SealedRoute(state["proof"]);
  if (!route.ok()) return route.status();
  auto transport = (*deps.transports)(*route, *credential);
  NyxidReply reply = transport->Cancel(operation->provider_operation_id, deadline);
  // The cancel reply is a status document; one without a readable status
  // proves nothing, and the next callback asks again (bounded by the deadline).
  const auto read = base::OptionalString(reply.body, "status");
  const std::string status = read.ok() && *read ? **read : "";
  AddEvent(turn, deps.now_ms, "cancel.sent",
           {{"step_id", step_id},
            {"deadline_unix_ms", deadline},
            {"http_status", reply.status},
            {"status", status}});
  if (status == "cancelled" || status == "outcome_uncertain") {
    return freeze(status == "cancelled" ? "code_execution_cancelled"
                                        : "code_execution_outcome_uncertain");
  }
  if (status == "succeeded" || status == "failed") {
    return ProgressStep(deps, turn, definition);  // provider truth wins: fetch the result
  }
  ScheduleIn(turn, deps.now_ms, 1000);
  return Commit(deps, turn);
}

absl::Status AuditStep(const TurnDeps& deps, Turn& turn) {
  json& state = turn.state();
  json& intent = state["audit_intent"];
  const json& frozen = intent["record"];
  AuditRecord record = RecordFromJson(frozen);
  // A running audit that could not be written yet goes first.
  if (state["running_audit_pending"].is_object()) {
    auto running = deps.audit->Append(RecordFromJson(state["running_audit_pending"]));
    if (!running.ok()) {
      const int attempts = intent.value("attempts", 0) + 1;
      intent["attempts"] = attempts;
      AddEvent(turn, deps.now_ms, "audit.retry", {{"attempts", attempts}, {"conflict", false}});
      turn.next_due_ms = deps.now_ms + BackoffMs(attempts);
      return Commit(deps, turn);
    }
    state["running_audit_pending"] = nullptr;
  }
  auto appended = deps.audit->Append(record);
  const int attempts = intent.value("attempts", 0) + 1;
  intent["attempts"] = attempts;
  if (!appended.ok() || *appended == AppendOutcome::kConflict) {
    // The stop stays gated on the frozen intent; retry with bounded backoff.
    AddEvent(turn, deps.now_ms, "audit.retry",
             {{"attempts", attempts}, {"conflict", appended.ok()}});
    turn.next_due_ms = deps.now_ms + BackoffMs(attempts);
    return Commit(deps, turn);
  }
  const std::string then = intent.value("then", "");
  state["audit_intent"] = nullptr;
  AddEvent(turn, deps.now_ms, "audit.written",
           {{"step_id", record.step_id}, {"duplicate", *appended == AppendOutcome::kDuplicate}});
  turn.run.phase = "running";
  if (then == "stopped") {
    FinishRun(turn, deps.now_ms, "stopped", "workflow_stopped");
  } else if (then == "fail_run") {
    FinishRun(turn, deps.now_ms, "failed", "step_failed");
  } else {
    state["step_index"] = state.value("step_index", 0) + 1;
    ScheduleIn(turn, deps.now_ms, 1);
  }
  return Commit(deps, turn);
}

}  // namespace

std::string SealJson(const std::string& key, const nlohmann::json& value) {
  return base::SecretBoxSeal(key, value.dump());
}

absl::StatusOr<nlohmann::json> UnsealJson(const std::string& key, const std::string& sealed) {
  auto plain = base::SecretBoxOpen(key, sealed);
  if (!plain.ok()) return plain.status();
  json value = json::parse(*plain, nullptr, false);
  if (value.is_discarded()) return absl::DataLossError("sealed material is corrupt");
  return value;
}

bool IsTerminalPhase(const std::string& phase) {
  return phase == "succeeded" || phase == "failed" || phase == "stopped";
}

int64_t BackoffMs(int attempt) {
  int64_t delay = 1000;
  for (int i = 1; i < attempt && delay < 30'000; ++i) delay *= 2;
  return std::min<int64_t>(delay, 30'000);
}

absl::Status ExecuteTurn(const TurnDeps& deps, const Callback& callback) {
  auto run = deps.store->GetRun(callback.run_id);
  if (!run.ok()) return run.status();
  if (IsTerminalPhase(run->phase) || run->state.value("callback_id", "") != callback.callback_id) {
    return absl::OkStatus();  // a stale delivery: the actor moved on
  }
  Turn turn;
  turn.run = *run;
  if (turn.run.phase == "finalizing_audit") return AuditStep(deps, turn);
  auto definition = LoadDefinition(deps, turn.state());
  if (!definition.ok()) return definition.status();
  if (turn.state()["stop"].is_object()) return StopStep(deps, turn, *definition);
  if (!turn.state()["pending"].is_object()) return StartStep(deps, turn, *definition);
  return ProgressStep(deps, turn, *definition);
}

}  // namespace aevatar::orchestrator
