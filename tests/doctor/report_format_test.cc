// The doctor's report as a table and as JSON.
#include "doctor/report_format.h"

#include <string>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace aevatar::doctor {
namespace {

Report Sample() {
  return RunChecks({
      {"namespace.pid", [] { return Pass("can create a new pid namespace"); }},
      {"runsc", [] { return Warn("runsc is not installed", "apt install runsc"); }},
      {"seccomp", [] { return Fail("prctl(PR_SET_SECCOMP): Invalid argument", "enable it"); }},
  });
}

TEST(DoctorReportFormat, TableHasALinePerCheckAndAFixUnderEachProblem) {
  const std::string table = FormatTable(Sample());
  const std::vector<std::string> lines = absl::StrSplit(table, '\n');
  ASSERT_GE(lines.size(), 7u) << table;
  EXPECT_EQ(lines[0].rfind("STATUS", 0), 0u) << table;
  EXPECT_EQ(lines[1].rfind("pass", 0), 0u) << table;
  EXPECT_NE(lines[1].find("namespace.pid"), std::string::npos);
  EXPECT_EQ(lines[2].rfind("warn", 0), 0u) << table;
  EXPECT_NE(lines[3].find("fix: apt install runsc"), std::string::npos) << table;
  EXPECT_EQ(lines[4].rfind("fail", 0), 0u) << table;
  EXPECT_NE(lines[5].find("fix: enable it"), std::string::npos) << table;
  EXPECT_NE(table.find("1 passed, 1 warnings, 1 failed: blocked"), std::string::npos) << table;
  // A pass has no fix line.
  EXPECT_EQ(lines[2].find("fix:"), std::string::npos);
}

TEST(DoctorReportFormat, JsonHasEveryFieldOfEveryCheck) {
  const nlohmann::json json = ReportToJson(Sample());
  EXPECT_EQ(json.at("ok"), false);
  ASSERT_EQ(json.at("checks").size(), 3u);
  const nlohmann::json& warn = json.at("checks").at(1);
  EXPECT_EQ(warn.at("name"), "runsc");
  EXPECT_EQ(warn.at("status"), "warn");
  EXPECT_EQ(warn.at("detail"), "runsc is not installed");
  EXPECT_EQ(warn.at("remediation"), "apt install runsc");
  EXPECT_EQ(json.at("checks").at(0).at("remediation"), "");
  EXPECT_EQ(json.at("checks").at(2).at("status"), "fail");
}

TEST(DoctorReportFormat, WarningsOnlyReadsReady) {
  const Report report = RunChecks({{"runsc", [] { return Warn("missing", "install"); }}});
  EXPECT_EQ(ReportToJson(report).at("ok"), true);
  EXPECT_NE(FormatTable(report).find("0 failed: ready"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::doctor
