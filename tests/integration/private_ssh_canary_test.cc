// The private_ssh acceptance path of issue 12 as a user runs it, under
// `aevatar up`: this machine registered as the demo user's NyxID node, a real
// sshd on loopback forcing host/aevatar-codex-wrapper, the host's own Codex
// CLI (its model the responses double), and the bundled canary, mounted
// from the skill `aevatar up` published (use_skill with mount_workflows):
//   aevatar skill use aevatar-codex-exec-workflow-sample --mount-workflows
//   aevatar workflow run codex-exec-private-ssh-check
//       --input prompt='{"service":"box","principal":USER}' --wait stream
// which waits for a person's approval: given on the /ui page in headless
// Chromium (screenshots in build/ui-artifacts/), refused with the CLI, and
// given after `aevatar up` restarted (the approval and the waiting run are
// durable; the node reconnects by itself). Also the interactive call.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "private_ssh_world.h"
#include "service_process.h"
#include "testing/host_codex.h"
#include "testing/proc_file.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kPlaywright[] = "/opt/aevatar/test-node/node_modules/playwright-core";
constexpr char kApproveScript[] = AEVATAR_SOURCE_DIR "/tests/ui/approve_private_ssh.cjs";
constexpr char kSkills[] = AEVATAR_SOURCE_DIR "/skills";
constexpr char kCanarySkill[] = "aevatar-codex-exec-workflow-sample";
constexpr char kCanary[] = "codex-exec-private-ssh-check";  // a workflow of that skill
constexpr char kCanaryPrompt[] = "Reply with exactly CODEX_EXEC_READY";

class PrivateSshCanaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* needed : {kHostCodex, "/usr/sbin/sshd", kChromium}) {
      if (::access(needed, X_OK) != 0) GTEST_SKIP() << needed << " is not installed";
    }
    if (::access(kPlaywright, R_OK) != 0) GTEST_SKIP() << "playwright-core is not installed";
    d_ = world_.dir();
    StartUp(PickFreePortRange(3));
    std::ifstream in(d_ + "/state/credentials.json");
    credentials_ = json::parse(in, nullptr, false);
    ASSERT_TRUE(credentials_.is_object());
    password_ = credentials_["demo"]["password"];
    ASSERT_TRUE(world_.BuildHost()) << world_.error();
    ASSERT_TRUE(world_.RegisterNode(credentials_["nyxid_url"], "demo", password_))
        << world_.error();
    cli_ = "XDG_CONFIG_HOME='" + d_ + "/aevatar-cli' timeout 300 " + BinaryPath("aevatar") + " ";
    ASSERT_EQ(Aevatar("login --url " + std::string(credentials_["aevatar_url"]) +
                      " --username demo --credentials-file '" + d_ + "/state/credentials.json'")
                  .exit_code,
              0);
    // The canary runs from the mounted skill, not from a local YAML copy.
    const ShellRun mounted =
        Aevatar(absl::StrCat("skill use ", kCanarySkill, " --mount-workflows"));
    ASSERT_EQ(mounted.exit_code, 0) << mounted.out << mounted.err;
    ASSERT_TRUE(absl::StrContains(mounted.out,
                                  absl::StrCat(kCanary, " (assets/", kCanary, ".yaml): mounted")))
        << mounted.out;
    input_ = absl::StrCat("prompt='{\"service\":\"box\",\"principal\":\"", world_.user(), "\"}'");
  }

  void StartUp(uint16_t base) {
    base_ = base;
    up_ = std::make_unique<ServiceProcess>(
        std::vector<std::string>{BinaryPath("aevatar"), "up", "--state-dir", d_ + "/state",
                                 "--port-base", std::to_string(base), "--skills-dir", kSkills},
        d_ + "/up.log");
    ASSERT_TRUE(up_->ok()) << up_->ReadLog();
  }

  // The aevatar CLI. RunShell captures through files in its directory, so a
  // call made while another runs (`in_background`) gets a directory of its own.
  ShellRun Aevatar(const std::string& args, bool in_background = false) {
    const std::string dir = in_background ? d_ + "/background" : d_;
    std::filesystem::create_directories(dir);
    return RunShell(dir, cli_ + args);
  }

  // The demo user's pending approval, once there is exactly one.
  std::string PendingApproval() {
    for (int i = 0; i < 300; ++i) {
      const json list = json::parse(Aevatar("approvals list --json").out, nullptr, false);
      for (const json& approval :
           list.is_object() ? list.value("approvals", json::array()) : json::array()) {
        if (approval.value("state", "") == "pending") return approval.value("id", "");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }

  // One GET of aevatar's API as the demo user (null when it fails).
  json Get(const std::string& path) {
    http::ClientRequest login;
    login.method = "POST";
    login.url = std::string(credentials_["nyxid_url"]) + "/api/v1/auth/login";
    login.body = json{{"username", "demo"}, {"password", password_}}.dump();
    login.headers.Set("Content-Type", "application/json");
    auto token = http::Fetch(login);
    if (!token.ok()) return json();
    http::ClientRequest read;
    read.url = std::string(credentials_["aevatar_url"]) + path;
    read.headers.Set(
        "Authorization",
        "Bearer " + json::parse(token->body, nullptr, false).value("access_token", std::string()));
    auto answer = http::Fetch(read);
    return answer.ok() ? json::parse(answer->body, nullptr, false) : json();
  }

  // The run, once it is done.
  json FinishedRun(const std::string& run_id) {
    for (int i = 0; i < 600; ++i) {
      const json run = Get("/api/workflow-runs/" + run_id);
      if (run.is_object() && run.value("done", false)) return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return json();
  }

  std::string StartCanary() {
    const ShellRun started = Aevatar(absl::StrCat("workflow run ", kCanary, " --input ", input_));
    return std::string(absl::StripAsciiWhitespace(started.out));
  }

  PrivateSshWorld world_;
  std::string d_;
  uint16_t base_ = 0;
  std::unique_ptr<ServiceProcess> up_;
  json credentials_;
  std::string password_;
  std::string cli_;
  std::string input_;
};

TEST_F(PrivateSshCanaryTest, ApprovedOnThePageTheCanaryReturnsExactlyCodexExecReady) {
  ShellRun stream;
  std::thread follow([&] {
    stream = Aevatar(absl::StrCat("workflow run ", kCanary, " --input ", input_, " --wait stream"),
                     /*in_background=*/true);
  });
  const std::string approval = PendingApproval();
  ASSERT_FALSE(approval.empty());
  EXPECT_EQ(world_.model().requests(), 0);  // nothing ran before a person decided
  const json shown = json::parse(Aevatar("approvals show --json " + approval).out, nullptr, false);
  const json runs = Get("/api/workflow-runs");
  ASSERT_TRUE(runs.is_object() && runs["runs"].size() == 1) << runs.dump();
  const std::string run_id = runs["runs"][0].value("run_id", "");

  const std::string artifacts = std::string(AEVATAR_BINARY_DIR) + "/ui-artifacts";
  std::filesystem::create_directories(artifacts);
  const json config = {{"url", credentials_["aevatar_url"]},
                       {"username", "demo"},
                       {"password", password_},
                       {"artifacts", artifacts},
                       {"approval_id", approval},
                       {"run_id", run_id},
                       {"service", "box"},
                       {"principal", world_.user()},
                       {"prompt", kCanaryPrompt}};
  std::ofstream(d_ + "/ui.json") << config.dump();
  const ShellRun browser =
      RunShell(d_, std::string("PLAYWRIGHT_CORE=") + kPlaywright + " timeout 200 node " +
                       kApproveScript + " \"$(cat '" + d_ + "/ui.json')\"");
  follow.join();
  EXPECT_EQ(browser.exit_code, 0) << browser.out << browser.err;
  EXPECT_EQ(stream.exit_code, 0) << stream.out << stream.err;
  EXPECT_TRUE(absl::StrContains(stream.out, "step.approval_required")) << stream.out;
  EXPECT_TRUE(absl::StrContains(stream.out, "approval=" + approval)) << stream.out;
  EXPECT_TRUE(absl::StrContains(stream.out, "succeeded")) << stream.out;
  EXPECT_TRUE(absl::StrContains(stream.out, "stdout: CODEX_EXEC_READY")) << stream.out;
  EXPECT_EQ(world_.model().requests(), 1);
  for (const char* shot : {"ui-private-ssh-pending.png", "ui-private-ssh-run.png"}) {
    EXPECT_TRUE(std::filesystem::exists(artifacts + "/" + shot)) << shot;
  }
  // The run's result is NyxID's raw SSH response.
  const json run = FinishedRun(run_id);
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  const json& output = run["steps"][0]["output"];
  EXPECT_EQ(output["exit_code"], 0);
  EXPECT_EQ(output["timed_out"], false);
  EXPECT_EQ(absl::StripAsciiWhitespace(output.value("stdout", "")), "CODEX_EXEC_READY");
  EXPECT_FALSE(output.contains("target")) << "not the managed shape";
  EXPECT_EQ(shown.value("state", ""), "pending");
}

TEST_F(PrivateSshCanaryTest, ADeniedApprovalFailsTheRunAndNothingRuns) {
  const std::string run_id = StartCanary();
  ASSERT_EQ(run_id.rfind("run_", 0), 0u) << run_id;
  const std::string approval = PendingApproval();
  ASSERT_FALSE(approval.empty());
  ASSERT_EQ(Aevatar("approvals deny " + approval).exit_code, 0);
  const json run = FinishedRun(run_id);
  EXPECT_EQ(run.value("status", ""), "failed") << run.dump();
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "approval_denied") << run.dump();
  EXPECT_EQ(world_.model().requests(), 0);
  EXPECT_TRUE(world_.WrapperLog().empty());
}

TEST_F(PrivateSshCanaryTest, AnApprovalPendingAcrossARestartStillRunsOnceApproved) {
  const std::string run_id = StartCanary();
  ASSERT_EQ(run_id.rfind("run_", 0), 0u) << run_id;
  const std::string approval = PendingApproval();
  ASSERT_FALSE(approval.empty());
  // aevatar up stops (NyxID with it: the node loses its connection).
  EXPECT_EQ(up_->Terminate(), 0);
  StartUp(base_);
  EXPECT_EQ(PendingApproval(), approval);
  bool online = false;
  for (int i = 0; i < 400 && !online; ++i) {
    const json nodes =
        json::parse(world_.Cli("demo", "node list --output json").out, nullptr, false);
    online =
        nodes.is_object() && !nodes["nodes"].empty() && nodes["nodes"][0]["status"] == "online";
    if (!online) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(online) << world_.DaemonLog("demo");
  ASSERT_EQ(Aevatar("approvals approve " + approval).exit_code, 0);
  const json run = FinishedRun(run_id);
  EXPECT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(world_.model().requests(), 1);
}

TEST_F(PrivateSshCanaryTest, TheInteractiveCallWaitsForItsApprovalThenRunsOnce) {
  ShellRun call;
  std::thread ask([&] {
    call = Aevatar(absl::StrCat("codex exec --private-ssh box --principal ", world_.user(),
                                " --prompt 'PLANTED-interactive: Reply with exactly ",
                                "CODEX_EXEC_READY' --approval-wait-secs 120"),
                   /*in_background=*/true);
  });
  const std::string approval = PendingApproval();
  ASSERT_FALSE(approval.empty());
  EXPECT_EQ(Aevatar("approvals approve " + approval).exit_code, 0);
  ask.join();
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  const json result = json::parse(call.out, nullptr, false);
  EXPECT_EQ(absl::StripAsciiWhitespace(result.value("stdout", "")), "CODEX_EXEC_READY") << call.out;
  EXPECT_EQ(result["timed_out"], false);
  // The approval allowed one run: a repeat with it is refused.
  EXPECT_EQ(world_.model().requests(), 1);
  const std::string log = up_->ReadLog();
  EXPECT_FALSE(absl::StrContains(log, "PLANTED-interactive"));
  EXPECT_FALSE(absl::StrContains(log, "nyxid_node_"));
  EXPECT_FALSE(absl::StrContains(log, world_.registration_token()));
}

}  // namespace
}  // namespace aevatar::testing
