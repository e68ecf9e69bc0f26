// The `triggers:` list of a workflow: cron schedules and webhooks
// (docs/workflows.md, Triggers). Validation only; firing lives in
// aevatar/triggers.
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "aevatar/workflow/cron_schedule.h"
#include "aevatar/workflow/workflow_definition.h"
#include "aevatar/workflow/workflow_internal.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kWorkflowTriggerInvalid[] = "WORKFLOW_TRIGGER_INVALID";

absl::Status TriggerInvalid(const std::string& path, const std::string& what) {
  return WorkflowError(kWorkflowTriggerInvalid, path, what);
}

}  // namespace

absl::StatusOr<std::vector<WorkflowTrigger>> ParseWorkflowTriggers(const nlohmann::json& triggers,
                                                                   const std::string& path) {
  std::vector<WorkflowTrigger> out;
  if (triggers.is_null()) return out;
  if (!triggers.is_array() || triggers.size() > kMaxWorkflowTriggers) {
    return TriggerInvalid(path, "must be a list of at most 8 triggers");
  }
  for (size_t i = 0; i < triggers.size(); ++i) {
    const nlohmann::json& item = triggers[i];
    const std::string item_path = IndexPath(path, i);
    if (!item.is_object() || item.size() != 1) {
      return TriggerInvalid(item_path, "must be `cron: \"EXPR\"` or `webhook: {}`");
    }
    WorkflowTrigger trigger;
    if (auto cron = item.find("cron"); cron != item.end()) {
      if (!cron->is_string())
        return TriggerInvalid(JoinPath(item_path, "cron"), "must be a string");
      auto parsed = CronSchedule::Parse(cron->get<std::string>());
      if (!parsed.ok()) {
        return TriggerInvalid(JoinPath(item_path, "cron"), std::string(parsed.status().message()));
      }
      trigger.kind = "cron";
      trigger.cron = absl::StrJoin(
          absl::StrSplit(cron->get<std::string>(), absl::ByAnyChar(" \t"), absl::SkipEmpty()), " ");
    } else if (auto hook = item.find("webhook"); hook != item.end()) {
      if (!hook->is_null() && !(hook->is_object() && hook->empty())) {
        return TriggerInvalid(JoinPath(item_path, "webhook"), "takes no settings: write {}");
      }
      trigger.kind = "webhook";
    } else {
      return TriggerInvalid(item_path, "must be `cron: \"EXPR\"` or `webhook: {}`");
    }
    out.push_back(std::move(trigger));
  }
  return out;
}

nlohmann::json WorkflowTriggerToJson(const WorkflowTrigger& trigger) {
  if (trigger.kind == "cron") return {{"cron", trigger.cron}};
  return {{"webhook", nlohmann::json::object()}};
}

}  // namespace aevatar::orchestrator
