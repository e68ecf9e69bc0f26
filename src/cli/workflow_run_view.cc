#include "cli/workflow_run_view.h"

#include <iomanip>

#include "base/json_read.h"

namespace aevatar::cli {

using nlohmann::json;

void PrintRun(std::ostream& out, const json& run) {
  out << "run " << base::StringOr(run, "run_id", "") << " ("
      << base::StringOr(run, "workflow_id", "") << "): " << base::StringOr(run, "status", "");
  if (std::string outcome = base::StringOr(run, "outcome_code", ""); !outcome.empty()) {
    out << " [" << outcome << "]";
  }
  if (std::string diagnostic = base::StringOr(run, "diagnostic_id", ""); !diagnostic.empty()) {
    out << " diagnostic id " << diagnostic;
  }
  out << "\n";
  for (const json& step : base::ArrayOrEmpty(run, "steps")) {
    out << "  step " << base::StringOr(step, "id", "") << ": "
        << base::StringOr(step, "status", "");
    if (std::string outcome = base::StringOr(step, "outcome_code", ""); !outcome.empty()) {
      out << " [" << outcome << "]";
    }
    if (int64_t elapsed = base::IntOr(step, "elapsed_ms", -1); elapsed >= 0) {
      out << " " << elapsed << " ms";
    }
    if (std::string diagnostic = base::StringOr(step, "diagnostic_id", ""); !diagnostic.empty()) {
      out << " diagnostic id " << diagnostic;
    }
    out << "\n";
    const json& output = base::ObjectOrEmpty(step, "output");
    if (!base::StringOr(output, "target", "").empty()) {  // codex_exec
      out << "    " << base::StringOr(output, "target", "") << " "
          << base::StringOr(output, "status", "") << ", exit code "
          << base::IntOr(output, "exit_code", -1) << ", diagnostic id "
          << base::StringOr(output, "diagnostic_id", "") << "\n"
          << "    output: " << base::StringOr(output, "output", "") << "\n";
    } else if (output.contains("timed_out")) {  // private_ssh: NyxID's raw SSH response
      out << "    exit code " << base::IntOr(output, "exit_code", -1) << ", timed out "
          << (base::BoolOr(output, "timed_out", false) ? "yes" : "no") << "\n"
          << "    stdout: " << base::StringOr(output, "stdout", "");
    } else if (!output.empty()) {
      out << "    stdout: " << base::StringOr(output, "stdout", "");
      if (std::string err = base::StringOr(output, "stderr", ""); !err.empty()) {
        out << "    stderr: " << err;
      }
    }
  }
}

void PrintRunEvent(std::ostream& out, const json& event, int64_t elapsed_s) {
  const json& fields = base::ObjectOrEmpty(event, "data");
  out << "[" << elapsed_s << "s] " << base::StringOr(event, "type", "");
  if (std::string step = base::StringOr(fields, "step_id", ""); !step.empty()) {
    out << " step=" << step;
  }
  if (auto it = fields.find("status"); it != fields.end()) {
    out << " status=" << it->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (std::string approval = base::StringOr(fields, "approval_id", ""); !approval.empty()) {
    out << " approval=" << approval;
    if (base::StringOr(event, "type", "") == "step.approval_required") {
      out << " (a person decides: aevatar approvals approve|deny " << approval
          << ", or the page /ui)";
    }
  }
  out << std::endl;
}

void PrintRunRow(std::ostream& out, const json& run) {
  std::string status = base::StringOr(run, "status", "");
  if (std::string outcome = base::StringOr(run, "outcome_code", ""); !outcome.empty()) {
    status += " [" + outcome + "]";
  }
  out << std::left << std::setw(30) << base::StringOr(run, "run_id", "") << " " << std::setw(24)
      << base::StringOr(run, "workflow_id", "") << " " << std::setw(28) << status << " "
      << base::StringOr(run, "created_at", "") << "\n";
}

}  // namespace aevatar::cli
