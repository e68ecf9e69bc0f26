#include "doctor/check.h"

#include <utility>

namespace aevatar::doctor {

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
  }
  return "fail";
}

Finding Pass(std::string detail) { return {CheckStatus::kPass, std::move(detail), ""}; }

Finding Warn(std::string detail, std::string remediation) {
  return {CheckStatus::kWarn, std::move(detail), std::move(remediation)};
}

Finding Fail(std::string detail, std::string remediation) {
  return {CheckStatus::kFail, std::move(detail), std::move(remediation)};
}

Report RunChecks(const std::vector<Check>& checks) {
  Report report;
  report.checks.reserve(checks.size());
  for (const Check& check : checks) {
    Finding finding = check.probe ? check.probe() : Fail("the check has no probe", "");
    if (finding.status != CheckStatus::kPass && finding.remediation.empty()) {
      finding.remediation = kDefaultRemediation;
    }
    if (finding.status == CheckStatus::kFail) report.ok = false;
    report.checks.push_back(
        {check.name, finding.status, std::move(finding.detail), std::move(finding.remediation)});
  }
  return report;
}

int ExitCode(const Report& report) { return report.ok ? 0 : 1; }

}  // namespace aevatar::doctor
