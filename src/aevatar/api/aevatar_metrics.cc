#include "aevatar/api/aevatar_metrics.h"

#include "absl/strings/ascii.h"

namespace aevatar::orchestrator {
namespace {

// The tool a route calls, "" for other routes.
std::string ToolOfRoute(const std::string& route) {
  if (route == "/api/tools/code_execute") return "code_execute";
  if (route == "/api/tools/codex_exec") return "codex_exec";
  return "";
}

}  // namespace

AevatarMetrics::AevatarMetrics()
    : http_(registry_, "aevatar"),
      tool_calls_(registry_.AddCounter("aevatar_tool_calls_total",
                                       "Interactive tool calls by tool and outcome (ok, or the "
                                       "typed error code in lower case).",
                                       {"tool", "outcome"})),
      runs_(registry_.AddCounter("aevatar_workflow_runs_total",
                                 "Workflow runs this replica finished, by terminal status.",
                                 {"status"})),
      run_seconds_(registry_.AddHistogram("aevatar_workflow_run_duration_seconds",
                                          "Time from a workflow run's creation to its finish.")),
      codex_runs_(registry_.AddCounter(
          "aevatar_codex_runs_total",
          "Managed codex_exec runs by outcome: the runner's status (succeeded, failed, "
          "timed_out) or the typed error code in lower case.",
          {"outcome"})),
      approvals_pending_(registry_.AddGauge("aevatar_approvals_pending",
                                            "Pending, unexpired approvals of every owner.")) {}

void AevatarMetrics::CountRequest(const std::string& route, int status, const std::string& code,
                                  double seconds) {
  http_.Observe(route, status, seconds);
  if (std::string tool = ToolOfRoute(route); !tool.empty()) {
    tool_calls_->Add({tool, code.empty() ? std::string("ok") : absl::AsciiStrToLower(code)});
  }
}

void AevatarMetrics::CountRunFinished(const std::string& status, double seconds) {
  runs_->Add({status});
  run_seconds_->Observe({}, seconds);
}

void AevatarMetrics::CountCodexRun(const std::string& outcome) {
  codex_runs_->Add({absl::AsciiStrToLower(outcome)});
}

std::string AevatarMetrics::Render(int64_t approvals_pending) const {
  if (approvals_pending >= 0) approvals_pending_->Set({}, static_cast<double>(approvals_pending));
  return registry_.Render();
}

}  // namespace aevatar::orchestrator
