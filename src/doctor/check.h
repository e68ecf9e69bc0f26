#ifndef AEVATAR_DOCTOR_CHECK_H_
#define AEVATAR_DOCTOR_CHECK_H_

#include <functional>
#include <string>
#include <vector>

// `doctor`: a preflight of what the services need from the host. A check is
// a name and a probe; the probe returns a Finding, and the runner turns the
// findings into a Report. A failed check is a blocker (the service would not
// start or a verb would not work); a warning names something optional that
// is missing (the gVisor backend without managed Codex configured, say).
namespace aevatar::doctor {

enum class CheckStatus { kPass, kWarn, kFail };

// "pass" | "warn" | "fail".
const char* CheckStatusName(CheckStatus status);

// What one probe found. `remediation` says what an operator does about a
// warning or a failure; it is empty for a pass.
struct Finding {
  CheckStatus status = CheckStatus::kPass;
  std::string detail;
  std::string remediation;
};
Finding Pass(std::string detail);
Finding Warn(std::string detail, std::string remediation);
Finding Fail(std::string detail, std::string remediation);

struct Check {
  std::string name;  // stable, dotted: "namespace.pid", "hello.python"
  std::function<Finding()> probe;
};

struct CheckResult {
  std::string name;
  CheckStatus status = CheckStatus::kPass;
  std::string detail;
  std::string remediation;
};

struct Report {
  std::vector<CheckResult> checks;
  bool ok = true;  // no check failed (warnings do not count)
};

// What a warning or failure without a remediation of its own is told.
inline constexpr char kDefaultRemediation[] = "see the doctor section of docs/chrono-sandbox.md";

// Runs the checks in order, one at a time. A check without a probe fails; a
// warning or failure without a remediation gets kDefaultRemediation.
Report RunChecks(const std::vector<Check>& checks);

// The process exit code of a doctor command: 0 when `report.ok`, else 1.
int ExitCode(const Report& report);

}  // namespace aevatar::doctor

#endif  // AEVATAR_DOCTOR_CHECK_H_
