#include "doctor/report_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace aevatar::doctor {

std::string FormatTable(const Report& report) {
  size_t name_width = 4;
  for (const CheckResult& check : report.checks) {
    name_width = std::max(name_width, check.name.size());
  }
  const auto pad = [](const std::string& text, size_t width) {
    return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
  };
  std::string out = absl::StrCat(pad("STATUS", 8), pad("CHECK", name_width + 2), "DETAIL\n");
  int counts[3] = {0, 0, 0};
  for (const CheckResult& check : report.checks) {
    ++counts[static_cast<int>(check.status)];
    absl::StrAppend(&out, pad(CheckStatusName(check.status), 8), pad(check.name, name_width + 2),
                    check.detail, "\n");
    if (check.status != CheckStatus::kPass) {
      absl::StrAppend(&out, std::string(8 + name_width + 2, ' '), "fix: ", check.remediation, "\n");
    }
  }
  absl::StrAppend(&out, "\n", counts[0], " passed, ", counts[1], " warnings, ", counts[2],
                  " failed: ", report.ok ? "ready" : "blocked (fix the failed checks)", "\n");
  return out;
}

nlohmann::json ReportToJson(const Report& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& check : report.checks) {
    checks.push_back({{"name", check.name},
                      {"status", CheckStatusName(check.status)},
                      {"detail", check.detail},
                      {"remediation", check.remediation}});
  }
  return {{"checks", std::move(checks)}, {"ok", report.ok}};
}

}  // namespace aevatar::doctor
