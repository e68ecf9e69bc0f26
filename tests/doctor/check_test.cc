// The doctor's check runner with injected probes: a failing probe is a
// blocker with its remediation and a non-zero exit; warnings are not.
#include "doctor/check.h"

#include <string>
#include <vector>

#include "cli/doctor_command.h"
#include "gtest/gtest.h"

namespace aevatar::doctor {
namespace {

std::vector<Check> Probes(std::vector<Finding> findings) {
  std::vector<Check> checks;
  for (size_t i = 0; i < findings.size(); ++i) {
    checks.push_back({"probe." + std::to_string(i), [found = findings[i]] { return found; }});
  }
  return checks;
}

TEST(DoctorChecks, AllPassIsOkAndExitsZero) {
  const Report report = RunChecks(Probes({Pass("a"), Pass("b")}));
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(ExitCode(report), 0);
  EXPECT_EQ(report.checks[0].name, "probe.0");
  EXPECT_EQ(report.checks[1].detail, "b");
  EXPECT_EQ(report.checks[1].remediation, "");
}

TEST(DoctorChecks, FailingProbeIsABlockerWithItsRemediation) {
  const Report report = RunChecks(Probes({Pass("a"), Fail("no seccomp", "enable it"), Pass("c")}));
  ASSERT_EQ(report.checks.size(), 3u);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(ExitCode(report), 0);
  EXPECT_EQ(report.checks[1].status, CheckStatus::kFail);
  EXPECT_EQ(report.checks[1].detail, "no seccomp");
  EXPECT_EQ(report.checks[1].remediation, "enable it");
  // Later checks still run: one blocker does not hide the others.
  EXPECT_EQ(report.checks[2].status, CheckStatus::kPass);
}

TEST(DoctorChecks, WarningsDoNotBlock) {
  const Report report = RunChecks(Probes({Warn("no runsc", "install it"), Pass("b")}));
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(ExitCode(report), 0);
  EXPECT_EQ(report.checks[0].status, CheckStatus::kWarn);
  EXPECT_EQ(report.checks[0].remediation, "install it");
}

TEST(DoctorChecks, ProblemWithoutRemediationGetsTheDefault) {
  const Report report = RunChecks(Probes({Fail("broken", ""), Warn("odd", "")}));
  EXPECT_EQ(report.checks[0].remediation, kDefaultRemediation);
  EXPECT_EQ(report.checks[1].remediation, kDefaultRemediation);
}

TEST(DoctorChecks, CheckWithoutProbeFails) {
  const Report report = RunChecks({Check{"empty", nullptr}});
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_EQ(report.checks[0].status, CheckStatus::kFail);
  EXPECT_FALSE(report.ok);
}

TEST(DoctorCommand, PrintsTheReportAndReturnsItsExitCode) {
  const Report blocked = RunChecks(Probes({Fail("cgroup v2 lacks pids", "enable pids")}));
  ::testing::internal::CaptureStdout();
  const int code = cli::PrintDoctorReport(blocked, "json");
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 1);
  EXPECT_NE(printed.find("\"remediation\":\"enable pids\""), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"ok\":false"), std::string::npos) << printed;

  ::testing::internal::CaptureStdout();
  EXPECT_EQ(cli::PrintDoctorReport(RunChecks(Probes({Pass("fine")})), "table"), 0);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("ready"), std::string::npos);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::PrintDoctorReport(blocked, "yaml"), 2);
  ::testing::internal::GetCapturedStderr();
}

}  // namespace
}  // namespace aevatar::doctor
