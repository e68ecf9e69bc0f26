// `chrono-sandbox doctor` and `aevatar doctor` on this machine, as an operator
// runs them: every check is present with a status, the sandboxed hello worlds
// pass (the hostile-program suite runs here, so the sandbox works), and the
// exit code agrees with "ok". A broken vault key is a blocker: exit 1.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

const std::vector<std::string> kHostChecks = {
    "root",
    "namespace.pid",
    "namespace.mount",
    "namespace.net",
    "namespace.ipc",
    "namespace.uts",
    "namespace.cgroup",
    "namespace.user",
    "cgroup",
    "no_new_privs",
    "seccomp",
    "sandbox_init",
    "disk",
    "runtime.python",
    "runtime.javascript",
    "runtime.typescript",
    "runtime.bash",
    "runsc",
    "codex_cli",
    "hello.python",
    "hello.javascript",
    "hello.typescript",
    "hello.bash",
    "gvisor.hello",
};

// Runs `command`, parses its JSON report and checks its shape: every check
// has a name, a known status and a detail, every problem a remediation, and
// "ok" and the exit code agree with the statuses.
nlohmann::json RunDoctor(const TempDir& dir, const std::string& command) {
  const ShellRun run = RunShell(dir.path(), command);
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(report.is_object()) << run.out << run.err;
  if (!report.is_object()) return {};
  bool any_fail = false;
  for (const nlohmann::json& check : report.at("checks")) {
    const std::string status = check.at("status");
    EXPECT_TRUE(status == "pass" || status == "warn" || status == "fail") << check.dump();
    EXPECT_FALSE(check.at("detail").get<std::string>().empty()) << check.dump();
    EXPECT_EQ(check.at("remediation").get<std::string>().empty(), status == "pass") << check.dump();
    any_fail |= status == "fail";
  }
  EXPECT_EQ(report.at("ok").get<bool>(), !any_fail) << run.out;
  EXPECT_EQ(run.exit_code, any_fail ? 1 : 0) << run.out << run.err;
  return report;
}

std::map<std::string, nlohmann::json> ByName(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> checks;
  for (const nlohmann::json& check : report.at("checks")) checks[check.at("name")] = check;
  return checks;
}

void ExpectHostChecks(const std::map<std::string, nlohmann::json>& checks) {
  for (const std::string& name : kHostChecks) {
    EXPECT_TRUE(checks.count(name)) << "missing check " << name;
  }
  for (const char* hello : {"hello.python", "hello.javascript", "hello.typescript", "hello.bash"}) {
    ASSERT_TRUE(checks.count(hello));
    EXPECT_EQ(checks.at(hello).at("status"), "pass") << checks.at(hello).dump();
  }
}

TEST(DoctorCli, ChronoSandboxDoctorChecksEverythingAndHelloWorldsPass) {
  TempDir dir;
  const nlohmann::json report = RunDoctor(
      dir, BinaryPath("chrono-sandbox") + " doctor --output json --state-dir " + dir.path());
  const auto checks = ByName(report);
  EXPECT_EQ(report.at("checks").size(), kHostChecks.size());
  ExpectHostChecks(checks);
  // What the engine needs to start at all passed, else no hello world could.
  for (const char* name : {"root", "cgroup", "seccomp", "no_new_privs", "sandbox_init"}) {
    EXPECT_EQ(checks.at(name).at("status"), "pass") << checks.at(name).dump();
  }
}

TEST(DoctorCli, MissingCodexCliWarnsUnlessManagedCodexIsConfigured) {
  TempDir dir;
  const std::string command = BinaryPath("chrono-sandbox") +
                              " doctor --output json --codex-path /nonexistent/codex --state-dir " +
                              dir.path();
  auto checks = ByName(RunDoctor(dir, command));
  EXPECT_EQ(checks.at("codex_cli").at("status"), "warn") << checks.at("codex_cli").dump();

  const ShellRun run = RunShell(dir.path(), command + " --codex-model some-model");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  checks = ByName(nlohmann::json::parse(run.out));
  EXPECT_EQ(checks.at("codex_cli").at("status"), "fail") << checks.at("codex_cli").dump();
  EXPECT_NE(checks.at("codex_cli").at("remediation").get<std::string>().find("scripts/setup"),
            std::string::npos);
}

TEST(DoctorCli, TableOutputSaysReadyOrBlocked) {
  TempDir dir;
  const ShellRun run =
      RunShell(dir.path(), BinaryPath("chrono-sandbox") + " doctor --state-dir " + dir.path());
  EXPECT_NE(run.out.find("hello.bash"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(run.exit_code == 0 ? "failed: ready" : "failed: blocked"),
            std::string::npos)
      << run.out;
}

TEST(DoctorCli, AevatarDoctorAddsStateChecksAndABadVaultKeyBlocks) {
  TempDir dir;
  const std::string state_dir = dir.path() + "/state";
  const std::string command =
      BinaryPath("aevatar") + " doctor --output json --state-dir " + state_dir;
  auto checks = ByName(RunDoctor(dir, command));
  ExpectHostChecks(checks);
  ASSERT_TRUE(checks.count("state_dir") && checks.count("vault_key"));
  EXPECT_EQ(checks.at("vault_key").at("status"), "pass");
  EXPECT_FALSE(std::filesystem::exists(state_dir)) << "doctor must not create the state dir";

  std::filesystem::create_directories(state_dir + "/aevatar");
  std::filesystem::permissions(state_dir, std::filesystem::perms::owner_all);
  std::ofstream(state_dir + "/aevatar/vault.key") << "truncated";
  std::filesystem::permissions(state_dir + "/aevatar/vault.key",
                               std::filesystem::perms::owner_read);
  const ShellRun run = RunShell(dir.path(), command);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  checks = ByName(nlohmann::json::parse(run.out));
  EXPECT_EQ(checks.at("vault_key").at("status"), "fail");
  EXPECT_FALSE(checks.at("vault_key").at("remediation").get<std::string>().empty());
}

}  // namespace
}  // namespace aevatar::testing
