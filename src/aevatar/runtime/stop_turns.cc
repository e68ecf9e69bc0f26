#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/tool_audit_payload.h"
#include "aevatar/runtime/turn.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {

using nlohmann::json;

absl::Status StopStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition) {
  json& state = turn.state();
  const int64_t deadline = state["stop"].value("deadline_unix_ms", int64_t{0});
  const json& pending = state["pending"];
  const std::string step_id = pending.is_object() ? pending.value("step_id", "") : "";
  // The operation and the stop intent stay in the state until the frozen
  // audit is written (AuditStep then clears them).
  auto freeze = [&](const std::string& outcome) {
    TerminalOutcome terminal{
        step_id.empty() ? "-" : step_id, outcome, "cancel", "", {}, std::nullopt};
    if (pending.is_object()) {
      json& step_state = CurrentStep(turn);
      step_state["status"] = "cancelled";
      step_state["outcome_code"] = outcome;
      step_state["finished_at_ms"] = deps.now_ms;
      auto operation = PendingOperation::FromJson(pending["operation"]);
      if (operation.ok()) terminal.operation = *operation;
    }
    json fact = TerminalFact(turn.run, terminal);
    fact["stop_deadline_unix_ms"] = deadline;
    FreezeAuditIntent(turn, deps.now_ms, terminal.step_id, std::move(fact), "stopped");
    return Commit(deps, turn);
  };
  if (!pending.is_object()) return freeze("workflow_stopped");
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  if (!operation->MayHaveSubmitted()) return freeze("code_execution_cancelled_before_submit");
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

}  // namespace aevatar::orchestrator
