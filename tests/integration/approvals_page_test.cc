// The /ui approvals page under `aevatar up`, driven by a real browser
// (Debian's chromium through playwright-core: tests/ui/approvals_page.cjs).
// The test plants three pending approvals of the demo user in aevatar's own
// store (the ask -> approve -> run path is tested in codex_api_test), the
// browser logs in,
// approves one and denies another, and the store must say so; the page's
// headers must forbid everything but this origin. Screenshots are kept in
// build/ui-artifacts/.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "aevatar/approvals/approval_store.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "os/atomic_file.h"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;
using orchestrator::Approval;
using orchestrator::ApprovalState;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kPlaywright[] = "/opt/aevatar/test-node/node_modules/playwright-core";
constexpr char kScript[] = AEVATAR_SOURCE_DIR "/tests/ui/approvals_page.cjs";
constexpr char kPrompt[] = "Reply with exactly CODEX_EXEC_READY";
constexpr char kHostilePrompt[] = "<img src=x onerror=alert(1)><script>alert(2)</script>";

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

http::ClientResponse Send(const std::string& method, const std::string& url,
                          const std::string& body = "",
                          const std::string& content_type = "application/json") {
  http::ClientRequest request;
  request.method = method;
  request.url = url;
  request.body = body;
  request.timeout = std::chrono::seconds(30);
  if (!body.empty()) request.headers.Set("Content-Type", content_type);
  auto response = http::Fetch(request);
  return response.ok() ? *response : http::ClientResponse{};
}

// The NyxID user id of the demo user: the `sub` of its access token.
std::string DemoUserId(const json& credentials) {
  auto login =
      Send("POST", credentials["nyxid_url"].get<std::string>() + "/api/v1/auth/login",
           json{{"username", "demo"}, {"password", credentials["demo"]["password"]}}.dump());
  const std::string token = JsonOf(login).value("access_token", "");
  const size_t first = token.find('.');
  const size_t second = token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return "";
  auto claims = base::Base64UrlDecode(token.substr(first + 1, second - first - 1));
  return claims.ok() ? json::parse(*claims, nullptr, false).value("sub", "") : "";
}

Approval Pending(const std::string& id, const std::string& owner, const std::string& prompt) {
  Approval approval;
  approval.id = id;
  approval.owner = owner;
  approval.tool = "codex_exec";
  approval.call = {{"target",
                    {{"kind", "private_ssh"},
                     {"private_ssh", {{"service", "laptop-box"}, {"principal", "alice"}}}}},
                   {"prompt", prompt},
                   {"timeout_secs", 300}};
  approval.call_digest = orchestrator::ApprovalCallDigest(approval.call);
  approval.created_at_ms = base::NowUnixMs();
  approval.expires_at_ms = approval.created_at_ms + 600'000;
  return approval;
}

TEST(ApprovalsPage, APersonApprovesAndDeniesTheExactCallsInABrowser) {
  if (::access(kChromium, X_OK) != 0 || ::access(kPlaywright, R_OK) != 0) {
    GTEST_SKIP() << "chromium or playwright-core is not installed (scripts/setup installs both)";
  }
  TempDir dir("/var/tmp");
  const std::string state = dir.path() + "/state";
  const uint16_t base = PickFreePortRange(3);
  ServiceProcess up(
      {BinaryPath("aevatar"), "up", "--state-dir", state, "--port-base", std::to_string(base)},
      dir.path() + "/up.log");
  ASSERT_TRUE(up.ok()) << up.ReadLog();
  const json credentials = ReadJson(state + "/credentials.json");
  const std::string aevatar = credentials["aevatar_url"];
  const std::string password = credentials["demo"]["password"];
  const std::string owner = DemoUserId(credentials);
  ASSERT_FALSE(owner.empty());

  // The page's files are this origin's only, never framed, never sniffed.
  const http::ClientResponse page = Send("GET", aevatar + "/ui");
  ASSERT_EQ(page.status, 200);
  const std::string csp = page.headers.Get("Content-Security-Policy").value_or("");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(page.headers.Get("X-Content-Type-Options").value_or(""), "nosniff");
  // The login takes JSON only (a cross-site form cannot send it).
  EXPECT_EQ(Send("POST", aevatar + "/ui/login", "username=demo&password=x",
                 "application/x-www-form-urlencoded")
                .status,
            415);

  auto vault_key = os::LoadOrCreateKeyFile(state + "/aevatar/vault.key", 32);
  ASSERT_TRUE(vault_key.ok()) << vault_key.status();
  auto store = orchestrator::OpenSqliteApprovalStore(
      state + "/aevatar/approvals.db", std::make_shared<orchestrator::VaultKeyring>(*vault_key));
  ASSERT_TRUE(store.ok()) << store.status();
  for (const auto& [id, prompt] : {std::pair{"appr_approve", kPrompt},
                                   {"appr_deny", kPrompt},
                                   {"appr_hostile", kHostilePrompt}}) {
    ASSERT_TRUE((*store)->Create(Pending(id, owner, prompt)).ok());
  }

  // One finished workflow run of the demo user, through the CLI.
  std::ofstream(dir.path() + "/ui-check.yaml")
      << "workflow_id: ui-check\nsteps:\n  - id: hello\n    tool: code_execute\n"
         "    arguments:\n      language: bash\n      timeout_secs: 60\n      source: |\n"
         "        echo UI_RUN_OK\n";
  const std::string cli = "XDG_CONFIG_HOME='" + dir.path() + "/cli' " + BinaryPath("aevatar") + " ";
  ASSERT_EQ(RunShell(dir.path(), cli + "login --url " + aevatar +
                                     " --username demo --credentials-file '" + state +
                                     "/credentials.json'")
                .exit_code,
            0);
  const ShellRun workflow =
      RunShell(dir.path(), cli + "workflow run --file '" + dir.path() + "/ui-check.yaml'");
  const std::string run_id = workflow.out.substr(0, workflow.out.find('\n'));
  ASSERT_EQ(run_id.rfind("run_", 0), 0u) << workflow.out << workflow.err;

  const std::string artifacts = std::string(AEVATAR_BINARY_DIR) + "/ui-artifacts";
  std::filesystem::create_directories(artifacts);
  const json config = {{"url", aevatar},
                       {"username", "demo"},
                       {"password", password},
                       {"artifacts", artifacts},
                       {"approve_id", "appr_approve"},
                       {"deny_id", "appr_deny"},
                       {"hostile_id", "appr_hostile"},
                       {"prompt", kPrompt},
                       {"hostile_prompt", kHostilePrompt},
                       {"run_id", run_id}};
  std::ofstream(dir.path() + "/config.json") << config.dump();
  const ShellRun run =
      RunShell(dir.path(), std::string("PLAYWRIGHT_CORE=") + kPlaywright + " timeout 120 node " +
                               kScript + " \"$(cat '" + dir.path() + "/config.json')\"");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("\"ok\":true"), std::string::npos) << run.out << run.err;

  auto state_of = [&](const std::string& id) {
    auto approval = (*store)->Get(owner, id);
    return approval.ok() && approval->has_value() ? (*approval)->state : ApprovalState::kExpired;
  };
  EXPECT_EQ(state_of("appr_approve"), ApprovalState::kApproved);
  EXPECT_EQ(state_of("appr_deny"), ApprovalState::kDenied);
  EXPECT_EQ(state_of("appr_hostile"), ApprovalState::kPending);
  for (const char* shot :
       {"ui-login.png", "ui-approvals-pending.png", "ui-approvals-decided.png", "ui-runs.png"}) {
    EXPECT_TRUE(std::filesystem::exists(artifacts + "/" + shot)) << shot;
  }
  // Neither the password nor the prompt reaches aevatar's log.
  const std::string log = up.ReadLog();
  EXPECT_EQ(log.find(password), std::string::npos);
  EXPECT_EQ(log.find("CODEX_EXEC_READY"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
