#include "aevatar/runtime/tool_audit_payload.h"

#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

std::string OutcomeKind(const std::string& outcome) {
  if (outcome == "succeeded") return "completed";
  if (outcome == "failed" || outcome == "code_execution_step_failed") return "program_failed";
  if (outcome == kOutcomeCancelled || outcome == "code_execution_cancelled_before_submit" ||
      outcome == "workflow_stopped") {
    return "cancelled";
  }
  if (outcome == kOutcomeUncertain || outcome == "code_execution_cancel_outcome_uncertain") {
    return "outcome_uncertain";
  }
  if (outcome == kOutcomeStepTimeout || outcome == "codex_exec_step_timeout") return "timeout";
  if (outcome == "managed_execution_nonzero_exit") return "program_failed";
  return "rejected";
}

// The member, or null when absent (a const json's operator[] must not be
// used for a key that may be missing).
const json& MemberOrNull(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

absl::Status Disagrees(const char* what) {
  return absl::InvalidArgumentError(std::string("the tool payload disagrees with the result: ") +
                                    what);
}

}  // namespace

std::string StageOfDetail(const std::string& detail, const std::string& fallback) {
  for (const char* stage : {"submit", "status", "result"}) {
    const std::string prefix = std::string(stage) + ":";
    if (detail.compare(0, prefix.size(), prefix) == 0) return stage;
  }
  return fallback;
}

json TerminalFact(const RunRecord& run, const TerminalOutcome& outcome) {
  const json& state = run.state;
  const std::string kind = OutcomeKind(outcome.outcome);
  const PendingOperation& op = outcome.operation;
  // The program may have run once a submit was dispatched (its answer, or
  // the commit of its receipt, may have been lost); before that, nothing
  // executed and a retry is safe.
  const bool may_have_executed = op.MayHaveSubmitted();
  const bool codex = outcome.tool == "codex_exec";
  json payload = {
      {"@type", kCodeExecutePayloadType},
      {"receipt",
       {{"tool", outcome.tool},
        {"capability_class", codex ? "RolloutRestrictedPlatform" : "PlatformBuiltIn"},
        {"call_id", run.run_id + "/" + outcome.step_id},
        {"subject", run.owner},
        {"credential_kind", base::StringOr(state["caller"], "kind", "")},
        {"provider_resource",
         {{"provider", "chrono-sandbox"},
          {"catalog_service_id", base::StringOr(state["proof"], "catalog_service_id", "")},
          {"operation_id", op.provider_operation_id},
          {"last_status", op.last_status}}}}},
      {"outcome_kind", kind},
      {"failure_stage", kind == "completed" ? "none" : outcome.failure_stage},
      {"mutation",
       {{"may_have_executed", may_have_executed}, {"durable_effects", "isolated_runtime_only"}}},
      {"safety", {{"sandboxed", true}, {"network", codex ? "model_route_only" : "none"}}},
      {"terminal", true},
      {"retryable", !may_have_executed && kind != "completed"},
  };
  if (kind != "completed") {
    payload["failure"] = {{"code", outcome.outcome}, {"detail", outcome.detail}};
  }
  json fact = {{"outcome", outcome.outcome},
               {"provider_operation_id", op.provider_operation_id},
               {"tool_payload", std::move(payload)}};
  if (outcome.exit_code) fact["exit_code"] = *outcome.exit_code;
  return fact;
}

absl::Status ValidateTerminalFact(const json& fact) {
  auto outcome = base::RequiredString(fact, "outcome");
  if (!outcome.ok()) return outcome.status();
  auto payload = base::RequiredObject(fact, "tool_payload");
  if (!payload.ok()) return payload.status();
  const json& p = **payload;
  if (base::StringOr(p, "@type", "") != kCodeExecutePayloadType) return Disagrees("@type");
  if (!base::BoolOr(p, "terminal", false)) return Disagrees("terminal");
  const std::string kind = base::StringOr(p, "outcome_kind", "");
  if (kind != OutcomeKind(*outcome)) return Disagrees("outcome_kind");
  if (kind != "completed" && base::StringOr(MemberOrNull(p, "failure"), "code", "") != *outcome) {
    return Disagrees("failure.code");
  }
  const json& resource = MemberOrNull(MemberOrNull(p, "receipt"), "provider_resource");
  if (base::StringOr(resource, "operation_id", "") !=
      base::StringOr(fact, "provider_operation_id", "")) {
    return Disagrees("operation_id");
  }
  return absl::OkStatus();
}

}  // namespace aevatar::orchestrator
