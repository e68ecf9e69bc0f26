#include "aevatar/audit/audit_log.h"
#include "aevatar/runtime/tool_audit_payload.h"
#include "aevatar/runtime/turn.h"
#include "base/crypto.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

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

}  // namespace

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
  ScheduleIn(turn, now, kAtOnceMs);
}

void AppendRunningAudit(const TurnDeps& deps, Turn& turn, const std::string& step_id,
                        const std::string& operation_id) {
  const json frozen =
      ToolAuditJson(turn, "tool.running", step_id, "",
                    {{"status", "running"}, {"provider_operation_id", operation_id}}, deps.now_ms);
  auto appended = deps.audit->Append(RecordFromJson(frozen));
  if (!appended.ok()) turn.state()["running_audit_pending"] = frozen;
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
  const int attempts = intent.value("attempts", 0) + 1;
  intent["attempts"] = attempts;
  // The adapter checks the generic result against the tool-owned payload; an
  // intent that disagrees is never appended, and the run stays gated on it.
  if (absl::Status valid = ValidateTerminalFact(record.fact); !valid.ok()) {
    AddEvent(turn, deps.now_ms, "audit.invalid", {{"attempts", attempts}});
    base::Log(base::LogLevel::kError, "workflow.audit_intent_invalid", turn.run.run_id,
              {{"attempts", attempts}, {"detail", std::string(valid.message())}});
    turn.next_due_ms = deps.now_ms + BackoffMs(attempts);
    return Commit(deps, turn);
  }
  auto appended = deps.audit->Append(record);
  if (!appended.ok() || *appended == AppendOutcome::kConflict) {
    // Only an appended (or duplicate: the same business fact) record settles
    // the intent. A conflict (the slot holds a different fact) or an error
    // keeps the stop gated on the frozen intent; retry with bounded backoff.
    AddEvent(turn, deps.now_ms, "audit.retry",
             {{"attempts", attempts}, {"conflict", appended.ok()}});
    turn.next_due_ms = deps.now_ms + BackoffMs(attempts);
    return Commit(deps, turn);
  }
  const std::string then = intent.value("then", "");
  state["audit_intent"] = nullptr;
  DropPending(turn);  // a stop kept the operation until now
  AddEvent(turn, deps.now_ms, "audit.written",
           {{"step_id", record.step_id}, {"duplicate", *appended == AppendOutcome::kDuplicate}});
  turn.run.phase = "running";
  if (then == "stopped") {
    FinishRun(turn, deps.now_ms, "stopped", "workflow_stopped");
  } else if (then == "fail_run") {
    FinishRun(turn, deps.now_ms, "failed", "step_failed");
  } else {
    state["step_index"] = state.value("step_index", 0) + 1;
    // After the last step the run ends in this commit, unless a stop came
    // meanwhile: the stop turn then decides how it ends, as after any step.
    if (NoStepLeft(turn) && !state["stop"].is_object()) {
      FinishAfterLastStep(turn, deps.now_ms);
    } else {
      ScheduleIn(turn, deps.now_ms, kAtOnceMs);
    }
  }
  return Commit(deps, turn);
}

}  // namespace aevatar::orchestrator
