#include <algorithm>
#include <chrono>

#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/turn.h"
#include "aevatar/tools/code_execute.h"
#include "aevatar/workflow/workflow_expect.h"
#include "aevatar/workflow/workflow_template.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

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

}  // namespace

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

}  // namespace aevatar::orchestrator
