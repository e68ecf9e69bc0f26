#include <algorithm>
#include <chrono>

#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/codex_step_turns.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/tool_audit_payload.h"
#include "aevatar/runtime/turn.h"
#include "aevatar/tools/code_execute.h"
#include "aevatar/workflow/workflow_expect.h"
#include "aevatar/workflow/workflow_template.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// The runtime re-read (spec: "Interactive runtime re-reads NyxID facts when
// it has a source-readable caller credential"). Only a HumanBearer run
// reads; Agent Key and delegation runs call only the sealed id. The read:
//   facts       are applied to the run's catalog (revocations are sticky);
//               the step fails closed with the category when the grant no
//               longer holds (route gone, inaccessible, inactive, contract
//               broken);
//   401         the credential expired during a long run: continue on the
//               sealed id; NyxID performs the final live credential and
//               allowlist check on that exact proxy request;
//   403         fails closed: code_execution_route_access_denied (revoked);
//   malformed   fails closed: code_execution_response_invalid;
//   5xx, transport failure (a decision; the spec leaves it open): continue
//               on the sealed id, as for a 401. An unavailable inventory can
//               neither grant nor deny, the catalog already granted the route,
//               and NyxID's proxy enforces the same active/usable facts on the
//               exact request; the durable exchange then retries with bounded
//               backoff within the step's timeout.
// Records a "route.checked" event (no ids). Returns the code to fail with,
// or "", and a detail for the diagnostic log line.
std::string RuntimeRouteCheck(const TurnDeps& deps, Turn& turn, const AdmittedRoute& route,
                              const std::string& credential, std::string& detail) {
  json& state = turn.state();
  if (base::StringOr(state["caller"], "kind", "") != "HumanBearer") return "";
  auto checked = [&](const char* nyxid, const char* result) {
    AddEvent(turn, deps.now_ms, "route.checked", {{"nyxid", nyxid}, {"result", result}});
  };
  if (deps.facts == nullptr || !*deps.facts) {
    checked("not_read", "continue_sealed");
    return "";
  }
  const absl::StatusOr<NyxidFacts> facts = (*deps.facts)(credential);
  json& catalog = state["authorization_catalog"];
  if (facts.ok()) {
    ApplyFacts(catalog, *facts, kRevokedByRuntimeReread, deps.now_ms);
    const std::string code = CheckGrant(catalog, route);
    checked("read", code.empty() ? "granted" : "revoked");
    detail = "runtime re-read: " + (code.empty() ? std::string("granted") : code);
    return code;
  }
  switch (facts.status().code()) {
    case absl::StatusCode::kUnauthenticated:
      checked("unauthorized", "continue_sealed");
      return "";
    case absl::StatusCode::kPermissionDenied:
      RevokeGrant(catalog, route.user_service_id, "code_execution_route_access_denied",
                  kRevokedByRuntimeReread, deps.now_ms);
      checked("forbidden", "revoked");
      detail = "runtime re-read: NyxID answered 403";
      return "code_execution_route_access_denied";
    case absl::StatusCode::kInvalidArgument:
      checked("malformed", "invalid");
      detail = "runtime re-read: " + std::string(facts.status().message());
      return kOutcomeResponseInvalid;
    default:
      checked("unavailable", "continue_sealed");
      return "";
  }
}

// The step's output from a normalized result (WorkflowExecutionResult::ToJson), or
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
  RecordStepFinished(turn, deps.now_ms, step.id, status, output);
  TerminalOutcome outcome;
  outcome.step_id = step.id;
  outcome.operation = decision.pending;
  outcome.detail = decision.detail;
  if (decision.kind == TurnKind::kCompleted) {
    outcome.outcome = status;
    outcome.failure_stage = "program";
    if (output["exit_code"].is_number_integer()) outcome.exit_code = output["exit_code"];
  } else {
    outcome.outcome = decision.outcome_code;
    outcome.failure_stage = decision.outcome_code == kOutcomeStepTimeout
                                ? "timeout"
                                : StageOfDetail(decision.detail, "status");
  }
  std::string then = stopping ? "stopped" : (status == "succeeded" ? "next_step" : "fail_run");
  FreezeAuditIntent(turn, deps.now_ms, step.id, TerminalFact(turn.run, outcome), then);
}

// The step's timeout_ms elapsed: nothing more is polled. A submitted
// operation gets one best-effort cancel (its deadline one exchange bound from
// now), and the step ends code_execution_step_timeout.
absl::Status TimeOutStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition,
                         ExecutionsTransport& transport, const PendingOperation& operation) {
  TurnDecision decision;
  decision.kind = TurnKind::kTerminal;
  decision.pending = operation;
  decision.outcome_code = kOutcomeStepTimeout;
  decision.detail = "the step's timeout_ms elapsed";
  if (!operation.provider_operation_id.empty()) {
    const int64_t cancel_deadline = deps.now_ms + std::chrono::milliseconds(kExchangeBound).count();
    const NyxidReply reply = transport.Cancel(operation.provider_operation_id, cancel_deadline);
    AddEvent(turn, deps.now_ms, "cancel.sent",
             {{"step_id", base::StringOr(turn.state()["pending"], "step_id", "")},
              {"reason", "step_timeout"},
              {"deadline_unix_ms", cancel_deadline},
              {"http_status", reply.status}});
    decision.detail += "; cancel answered HTTP " + std::to_string(reply.status);
  }
  CompleteStep(deps, turn, definition, decision, /*stopping=*/false);
  return Commit(deps, turn);
}

// Dispatch: commits that a submit may be sent from now on, then the turn
// goes on to send it. Committed only once everything the submit needs has
// loaded, and with no message between the commit and the POST (the turn
// holds the run), so that a stop meets either nothing sent or a dispatch:
// after a dispatch whose receipt commit was lost (a crash, or another
// replica's stop meanwhile) StopStep repeats the submit with the same key to
// learn the id and cancels it, and the audit says the program may have run.
// If this turn dies after the commit, its callback (due at once) repeats
// the submit with the same key.
absl::Status CommitDispatch(const TurnDeps& deps, Turn& turn, PendingOperation& operation) {
  operation.dispatched = true;
  turn.state()["pending"]["operation"] = operation.ToJson();
  ScheduleIn(turn, deps.now_ms, kAtOnceMs);
  turn.goes_on_after_commit = true;  // the delivery keeps its lease
  absl::Status committed = Commit(deps, turn);
  turn.goes_on_after_commit = false;
  return committed;
}

// One submit or status exchange (RunTurn) and the commit of what it learned.
absl::Status Exchange(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition,
                      ExecutionsTransport& transport, const json& material,
                      const PendingOperation& operation) {
  json& state = turn.state();
  json& pending = state["pending"];
  const bool had_receipt = !operation.provider_operation_id.empty();
  const auto started = std::chrono::steady_clock::now();
  TurnDecision decision = RunTurn(transport, base::StringOr(material, "idempotency_key", ""),
                                  material.value("body", json::object()), operation, deps.now_ms);
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

}  // namespace

absl::Status StartStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  const int index = state.value("step_index", 0);
  if (index >= static_cast<int>(definition.steps.size())) {
    FinishAfterLastStep(turn, deps.now_ms);
    return Commit(deps, turn);
  }
  const WorkflowStep& step = definition.steps[index];
  json& step_state = CurrentStep(turn);
  step_state["started_at_ms"] = deps.now_ms;
  // Nothing was submitted: the outcome is typed, the stage says where it stopped.
  auto fail_step = [&](const std::string& code, const std::string& stage,
                       const std::string& detail) {
    step_state["status"] = "failed";
    step_state["outcome_code"] = code;
    step_state["finished_at_ms"] = deps.now_ms;
    DiagnoseFailure(turn, step_state, code, detail);
    FreezeAuditIntent(turn, deps.now_ms, step.id,
                      TerminalFact(turn.run, {step.id, code, stage, detail, {}, std::nullopt}),
                      "fail_run");
    return Commit(deps, turn);
  };
  // codex_exec has its own capability class, credential and route contract
  // (codex_step_turns.cc): code_execute's catalog grant and route re-read do
  // not apply to it, and it never falls back to /executions.
  if (step.tool == "codex_exec") {
    auto arguments = RenderStepArguments(step, state["inputs"], state["step_outputs"]);
    if (!arguments.ok()) {
      return fail_step("workflow_arguments_invalid", "arguments", "arguments did not render");
    }
    return StartCodexStep(deps, turn, step, *arguments, fail_step);
  }
  // The actor-owned catalog first: a revoked or missing grant stops the step
  // before any network call.
  auto route = SealedRoute(state["proof"]);
  if (!route.ok()) {
    return fail_step(kGrantMissingCode, "admission", "the run's proof does not verify");
  }
  if (std::string denied = CheckGrant(state["authorization_catalog"], *route); !denied.empty()) {
    return fail_step(denied, "admission", "the authorization catalog does not grant the route");
  }
  auto arguments = RenderStepArguments(step, state["inputs"], state["step_outputs"]);
  if (!arguments.ok()) {
    return fail_step("workflow_arguments_invalid", "arguments", "arguments did not render");
  }
  auto credential = LoadCredential(deps, state);
  if (!credential.ok() &&
      base::ApiCode(credential.status()) == WorkflowRuntime::kAgentKeyMissingCode) {
    // An unattended run whose owner's vault holds no Agent Key: a typed
    // failure of the step (audited), not a turn retried until it gives up.
    return fail_step(WorkflowRuntime::kAgentKeyMissingCode, "credential",
                     "no Agent Key in the vault for the run's owner");
  }
  if (!credential.ok()) return credential.status();
  std::string detail;
  if (std::string denied = RuntimeRouteCheck(deps, turn, *route, *credential, detail);
      !denied.empty()) {
    return fail_step(denied, "route_check", detail);
  }
  auto args = ParseCodeExecuteArgs(arguments->dump());
  if (!args.ok()) {
    return fail_step("workflow_arguments_invalid", "arguments", "arguments did not validate");
  }
  const json material = {
      {"idempotency_key", OperationIdentity(turn.run.run_id, step.id,
                                            state.value("definition_digest", ""), *arguments)},
      {"body", ExecutorRequestBody(*args)}};
  const std::string ref = base::RandomId("mat_");
  turn.sealed_puts.push_back({ref, SealJson(*deps.vault, material)});
  state["pending"] = {{"step_id", step.id},
                      // The step's budget (timeout_ms) runs from its start.
                      {"deadline_ms", deps.now_ms + step.timeout_ms},
                      {"material_ref", ref},
                      {"material_digest", "sha256:" + base::Sha256Hex(material.dump())},
                      {"operation", PendingOperation{}.ToJson()}};
  step_state["status"] = "admitted";
  AddEvent(turn, deps.now_ms, "step.admitted", {{"step_id", step.id}, {"index", index}});
  ScheduleIn(turn, deps.now_ms, kAtOnceMs);
  return Commit(deps, turn);
}

absl::Status ProgressStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  json& pending = state["pending"];
  if (base::StringOr(pending, "tool", "") == "codex_exec") {
    return ProgressCodexStep(deps, turn, definition);
  }
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  // The sealed material (the idempotency key and the request) is for the
  // submit only: once the operation id is known it stays sealed.
  json material = json::object();
  if (operation->provider_operation_id.empty()) {
    auto loaded = LoadPendingMaterial(deps, pending);
    if (!loaded.ok()) return loaded.status();
    material = *std::move(loaded);
  }
  auto credential = LoadCredential(deps, state);
  if (!credential.ok()) return credential.status();
  auto route = SealedRoute(state["proof"]);
  if (!route.ok()) return route.status();
  auto transport = (*deps.transports)(*route, *credential);
  const int64_t step_deadline = base::IntOr(pending, "deadline_ms", 0);
  if (step_deadline > 0 && deps.now_ms >= step_deadline && !state["stop"].is_object()) {
    return TimeOutStep(deps, turn, definition, *transport, *operation);
  }
  if (!operation->MayHaveSubmitted()) {
    if (absl::Status st = CommitDispatch(deps, turn, *operation); !st.ok()) return st;
  }
  return Exchange(deps, turn, definition, *transport, material, *operation);
}

}  // namespace aevatar::orchestrator
