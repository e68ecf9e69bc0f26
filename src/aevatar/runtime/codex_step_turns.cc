// The turns of a codex_exec workflow step (managed_sandbox), durably:
//
//   start      renders and validates the arguments, seals the material (the
//              step's stable Idempotency-Key and the request arguments) and
//              commits the pending operation: nothing has been sent yet.
//   dispatch   records the attempt (attempts = 1) and commits: from here on a
//              stop or an audit knows the run may have started.
//   exchange   one synchronous managed call with the sealed key; its result
//              completes the step in the next commit. The run's lock is
//              released while the call waits (up to the managed request
//              deadline), so a stop or NyxID facts reach the run meanwhile;
//              if one did, the turn is stale and not committed, and the next
//              delivery repeats the call with the same key.
//
// An aevatar restart during the exchange loses only the uncommitted turn:
// the callback is still due, the exchange turn runs again and sends the same
// Idempotency-Key, and chrono-sandbox attaches it to the run it already has
// (contract §1: same owner + key + payload -> the same run and result), so
// the run is neither lost nor executed twice.
#include "aevatar/runtime/codex_step_turns.h"

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/tool_audit_payload.h"
#include "aevatar/workflow/workflow_expect.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// The step's outputs: the managed result's fields, plus `stdout` and
// `trimmed_output` (the answer) so trimmed_output_equals and templates read
// the same text. A typed failure has no runner result: its fields say so.
json CodexOutput(const ManagedCodexResult* result, const std::string& status,
                 const std::string& diagnostic_id) {
  if (result == nullptr) {
    return {{"status", status},     {"target", "managed_sandbox"},
            {"output", ""},         {"stdout", ""},
            {"stderr", ""},         {"trimmed_output", ""},
            {"exit_code", nullptr}, {"diagnostic_id", diagnostic_id}};
  }
  json out = result->ToJson();
  out["stdout"] = result->output;
  out["stderr"] = "";
  out["trimmed_output"] = std::string(absl::StripAsciiWhitespace(result->output));
  return out;
}

// The allowed_services of the Agent Key that started the run (empty: a
// token or an unrestricted key). An entry that is not a string keeps the
// run restricted, to nothing (fail closed).
std::vector<std::string> CallerServices(const json& state) {
  std::vector<std::string> services;
  for (const json& entry :
       base::ArrayOrEmpty(base::ObjectOrEmpty(state, "caller"), "allowed_services")) {
    services.push_back(entry.is_string() ? entry.get<std::string>() : std::string());
  }
  return services;
}

}  // namespace

absl::Status CompleteCodexStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                               std::string status, json output, std::string code,
                               const std::string& detail, const PendingOperation& operation) {
  json& state = turn.state();
  json& step_state = CurrentStep(turn);
  if (code.empty() && step.expect) {
    ExpectationResult check = EvaluateExpectation(*step.expect, output);
    if (!check.passed) {
      status = "failed";
      code = "codex_exec_expectation_failed";
      step_state["expectation_failures"] = check.failures;
    }
  }
  if (!code.empty()) {
    step_state["outcome_code"] = code;
    if (status == "succeeded") status = "failed";
    DiagnoseFailure(turn, step_state, code, detail);
  }
  RecordStepFinished(turn, deps.now_ms, step.id, status, output);
  TerminalOutcome outcome;
  outcome.tool = "codex_exec";
  outcome.step_id = step.id;
  outcome.operation = operation;
  outcome.detail = detail;
  outcome.outcome = code.empty() ? "succeeded" : code;
  outcome.failure_stage = code == "codex_exec_step_timeout" ? "timeout" : "program";
  if (output["exit_code"].is_number_integer()) outcome.exit_code = output["exit_code"];
  const bool stopping = state["stop"].is_object();
  const std::string then =
      stopping ? "stopped" : (status == "succeeded" ? "next_step" : "fail_run");
  FreezeAuditIntent(turn, deps.now_ms, step.id, TerminalFact(turn.run, outcome), then);
  return Commit(deps, turn);
}

std::string CodexStepIdempotencyKey(const std::string& run_id, const std::string& step_id,
                                    const std::string& workflow_digest, const json& arguments) {
  // The same derivation as code_execute's operation identity, over a
  // document that names the tool, so the two never share a key.
  return OperationIdentity(run_id, step_id, workflow_digest,
                           {{"tool", "codex_exec"}, {"arguments", arguments}});
}

absl::Status StartCodexStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                            const json& arguments, const FailStepFn& fail_step) {
  json& state = turn.state();
  auto args = CodexExecArgsFromJson(arguments);
  if (!args.ok()) {
    // The detail names the field (codex_exec's messages never echo values).
    return fail_step("workflow_arguments_invalid", "arguments",
                     "codex_exec arguments: " + std::string(args.status().message()));
  }
  if (args->target == CodexTarget::kPrivateSsh) {
    return StartPrivateSshStep(deps, turn, step, arguments, *args, fail_step);
  }
  if (deps.codex == nullptr || !*deps.codex) {
    return fail_step(kManagedTargetDisabled, "admission",
                     "managed codex_exec is off on this aevatar host");
  }
  const json material = {
      {"idempotency_key", CodexStepIdempotencyKey(turn.run.run_id, step.id,
                                                  state.value("definition_digest", ""), arguments)},
      {"arguments", arguments}};
  const std::string ref = base::RandomId("mat_");
  turn.sealed_puts.push_back({ref, SealJson(*deps.vault, material)});
  state["pending"] = {{"step_id", step.id},
                      {"tool", "codex_exec"},
                      {"deadline_ms", deps.now_ms + step.timeout_ms},
                      {"material_ref", ref},
                      {"material_digest", "sha256:" + base::Sha256Hex(material.dump())},
                      {"operation", PendingOperation{}.ToJson()}};
  CurrentStep(turn)["status"] = "admitted";
  AddEvent(turn, deps.now_ms, "step.admitted",
           {{"step_id", step.id}, {"index", state.value("step_index", 0)}, {"tool", "codex_exec"}});
  ScheduleIn(turn, deps.now_ms, kAtOnceMs);
  return Commit(deps, turn);
}

absl::Status ProgressCodexStep(const TurnDeps& deps, Turn& turn,
                               const WorkflowDefinition& definition) {
  json& state = turn.state();
  json& pending = state["pending"];
  const WorkflowStep& step = definition.steps[state.value("step_index", 0)];
  if (base::StringOr(pending, "target", "") == "private_ssh") {
    return ProgressPrivateSshStep(deps, turn, step);
  }
  auto material = LoadPendingMaterial(deps, pending);
  if (!material.ok()) return material.status();
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  const int64_t step_deadline = base::IntOr(pending, "deadline_ms", 0);
  if (step_deadline > 0 && deps.now_ms >= step_deadline) {
    const std::string diagnostic_id = base::RandomId("diag_");
    return CompleteCodexStep(
        deps, turn, step, "failed", CodexOutput(nullptr, "failed", diagnostic_id),
        "codex_exec_step_timeout", "the step's timeout_ms elapsed", *operation);
  }
  if (operation->attempts == 0) {
    // Dispatch: the attempt is committed before the side effect.
    operation->attempts = 1;
    operation->submitted_at_ms = deps.now_ms;
    operation->last_status = "running";
    pending["operation"] = operation->ToJson();
    CurrentStep(turn)["status"] = "running";
    AddEvent(turn, deps.now_ms, "step.submitted", {{"step_id", step.id}, {"tool", "codex_exec"}});
    ScheduleIn(turn, deps.now_ms, kAtOnceMs);
    return Commit(deps, turn);
  }
  auto args = CodexExecArgsFromJson((*material)["arguments"]);
  if (!args.ok()) return args.status();
  const std::string diagnostic_id = base::RandomId("diag_");
  // The exchange never outlives the step: its remaining budget caps it.
  const auto budget = std::chrono::milliseconds(step_deadline > 0 ? step_deadline - deps.now_ms
                                                                  : kCodexExecDefaultTimeoutMs);
  absl::StatusOr<ManagedCodexResult> result = absl::UnknownError("not exchanged");
  {
    // The run's messages (stop, NyxID facts) must not wait minutes for the
    // exchange: the run's lock is released while it waits.
    RunUnlocked unlocked(deps.run_lock);
    result = (*deps.codex)(turn.run.owner, *args, base::StringOr(*material, "idempotency_key", ""),
                           diagnostic_id, budget, CallerServices(state));
  }
  // A message changed the run meanwhile: this turn's view is stale and is not
  // committed. Its callback (or the stop's) is delivered again and repeats the
  // exchange with the same Idempotency-Key, which chrono-sandbox answers from
  // the run it already has; nothing runs twice.
  auto fresh = deps.store->GetRun(turn.run.run_id);
  if (!fresh.ok()) return fresh.status();
  if (fresh->version != turn.run.version) return absl::OkStatus();
  operation->attempts += 1;
  if (!result.ok()) {
    operation->last_status = "failed";
    std::string code = base::ApiCode(result.status());
    // The step's own timeout_ms ended the exchange, not a layer below it.
    if (code == kManagedBudgetExhausted) code = "codex_exec_step_timeout";
    return CompleteCodexStep(deps, turn, step, "failed",
                             CodexOutput(nullptr, "failed", diagnostic_id), code,
                             std::string(result.status().message()), *operation);
  }
  operation->last_status = result->status;
  const absl::Status outcome = ManagedOutcome(*result);
  return CompleteCodexStep(
      deps, turn, step, result->status, CodexOutput(&*result, result->status, diagnostic_id),
      outcome.ok() ? "" : base::ApiCode(outcome), std::string(outcome.message()), *operation);
}

std::optional<WorkflowRuntime::CodexStepCancel> RunningCodexStep(const TurnDeps& deps,
                                                                 const json& state) {
  const json& pending = base::ObjectOrEmpty(state, "pending");
  if (base::StringOr(pending, "tool", "") != "codex_exec" ||
      base::StringOr(pending, "target", "") == "private_ssh") {
    return std::nullopt;
  }
  auto operation = PendingOperation::FromJson(base::ObjectOrEmpty(pending, "operation"));
  if (!operation.ok() || operation->attempts == 0) return std::nullopt;  // nothing was sent
  auto material = LoadPendingMaterial(deps, pending);
  if (!material.ok()) return std::nullopt;
  return WorkflowRuntime::CodexStepCancel{base::StringOr(*material, "idempotency_key", ""),
                                          CallerServices(state)};
}

}  // namespace aevatar::orchestrator
