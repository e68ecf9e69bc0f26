// NyxID nodes and SSH services as a user sets them up (spec:
// codex-exec-node-setup.md "Private SSH target"), every piece real: `nyxid
// serve`, the `nyxid` CLI, the node daemon connecting out over a WebSocket, a
// real sshd on loopback whose dedicated key forces host/aevatar-codex-wrapper,
// and the host's own Codex CLI (its model the responses double, the one
// double here: no model provider is reachable from CI).
//
// The tests share one such setup and run in order; each says what it needs.
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "doubles/responses_double.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "testing/host_codex.h"
#include "testing/proc_file.h"
#include "testing/shell_run.h"
#include "testing/sshd_server.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kHostApiKey[] = "sk-host-own-key-PLANTED-77a1";
constexpr char kPrompt[] = "PLANTED-prompt-5e3: Reply with exactly CODEX_EXEC_READY";

struct NodeWorld {
  TempDir dir{"/var/tmp"};
  std::string d;
  std::string user;  // the Unix principal: this process's user
  std::unique_ptr<doubles::ResponsesDouble> model;
  std::unique_ptr<SshdServer> sshd;
  std::unique_ptr<NyxidFixture> nyxid;
  std::string registration_token;
  std::string node_id;
  std::string error;

  // The `nyxid` CLI as `who` (its own config and data directories).
  ShellRun Cli(const std::string& who, const std::string& args, const std::string& input = "") {
    std::string stdin_path;
    if (!input.empty()) {
      stdin_path = d + "/stdin.txt";
      std::ofstream(stdin_path, std::ios::trunc) << input;
    }
    return RunShell(d,
                    absl::StrCat("XDG_CONFIG_HOME='", d, "/", who, "/cfg' XDG_DATA_HOME='", d, "/",
                                 who, "/data' NYXID_URL='", nyxid->url(), "' timeout 120 ",
                                 BinaryPath("nyxid"), " ", args),
                    stdin_path);
  }

  // `nyxid ssh exec` as alice; stdout is NyxID's raw SSH result.
  ShellRun Exec(const std::string& who, const std::string& service, const std::string& principal,
                const std::string& extra = "") {
    return Cli(who,
               absl::StrCat("ssh exec --service ", service, " --principal ", principal,
                            " --timeout-secs 60 ", extra),
               kPrompt);
  }

  std::string DaemonLog() const {
    return ReadProcFile(d + "/alice/cfg/nyxid/nodes/work/daemon.log");
  }

  bool Build() {
    d = dir.path();
    user = ::getpwuid(::getuid())->pw_name;
    doubles::ResponsesDoubleOptions options;
    options.api_key = kHostApiKey;
    options.record_path = d + "/model.jsonl";
    auto started = doubles::ResponsesDouble::Start(options);
    if (!started.ok()) return Fail("model double: " + started.status().ToString());
    model = std::move(*started);
    if (RunShell(d, "git init -q '" + d + "/ws'").exit_code != 0) return Fail("git init");
    if (!MakeHostCodexHome(d, "codex-home", model->port(), kHostApiKey, true)) {
      return Fail("codex login");
    }
    const std::string pub = MakeSshKey(d + "/node_key");
    if (pub.empty()) return Fail("ssh-keygen");
    sshd = std::make_unique<SshdServer>(
        d, std::vector<std::string>{WrapperKeyLine(
               d, "codex-home", absl::StrCat("--workspace ", d, "/ws --codex ", kHostCodex), pub)});
    if (!sshd->ok()) return Fail(sshd->error());
    nyxid = std::make_unique<NyxidFixture>(
        "users:\n  - {username: alice, password: \"alice pw 1\"}\n"
        "  - {username: bob, password: \"bob pw 1\"}\n");
    if (!nyxid->ok()) return Fail("nyxid did not start");
    for (const char* who : {"alice", "bob"}) {
      if (Cli(who, absl::StrCat("login --username ", who, " --password-stdin"),
              absl::StrCat(who, " pw 1\n"))
              .exit_code != 0) {
        return Fail(absl::StrCat("login ", who));
      }
    }
    // 1. A one-time token, and this machine registered as node "laptop".
    const ShellRun token =
        Cli("alice", "node register-token --name laptop --terminal --output json");
    registration_token = json::parse(token.out, nullptr, false).value("token", "");
    if (registration_token.empty()) return Fail("register-token: " + token.err);
    const std::string ws_url =
        "ws://127.0.0.1:" + std::to_string(nyxid->service().port()) + "/api/v1/nodes/ws";
    const ShellRun reg = Cli("alice", "node register --token " + registration_token + " --url " +
                                          ws_url + " --profile work --encrypted-file");
    if (reg.exit_code != 0) return Fail("register: " + reg.err);
    // 2. Only this target, in the profile's [ssh].allowed_targets.
    const std::string config = d + "/alice/cfg/nyxid/nodes/work/config.toml";
    std::string text = ReadProcFile(config);
    text = std::regex_replace(
        text, std::regex("allowed_targets = \\[\\]"),
        "allowed_targets = [\"127.0.0.1:" + std::to_string(sshd->port()) + "\"]");
    std::ofstream(config, std::ios::trunc) << text;
    const ShellRun start = Cli("alice", "node daemon start --profile work");
    if (start.exit_code != 0) return Fail("daemon start: " + start.out + start.err);
    const ShellRun list = Cli("alice", "node list --output json");
    const json nodes = json::parse(list.out, nullptr, false);
    if (!nodes.is_object() || nodes["nodes"].size() != 1) return Fail("node list: " + list.out);
    node_id = nodes["nodes"][0].value("id", "");
    // 3. The private service, bound to the node; the node holds the key.
    const ShellRun service =
        Cli("alice", absl::StrCat("service add-ssh --label box --host 127.0.0.1 --port ",
                                  sshd->port(), " --via-node ", node_id,
                                  " --node-key --principals ", user, " --output json"));
    if (service.exit_code != 0) return Fail("add-ssh: " + service.err);
    const ShellRun creds = RunShell(
        d, absl::StrCat("NYXID_PROFILE=work XDG_CONFIG_HOME='", d, "/alice/cfg' XDG_DATA_HOME='", d,
                        "/alice/data' ", BinaryPath("nyxid"),
                        " node ssh-credentials add --service box", " --principal ", user,
                        " --key-file '", d, "/node_key' --host 127.0.0.1 --port ", sshd->port()));
    if (creds.exit_code != 0) return Fail("ssh-credentials add: " + creds.err);
    return true;
  }

  bool Fail(const std::string& why) {
    error = why;
    return false;
  }
};

NodeWorld* setup = nullptr;

class NyxidNodesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::access(kHostCodex, X_OK) != 0 || ::access("/usr/sbin/sshd", X_OK) != 0) return;
    setup = new NodeWorld;
    if (!setup->Build()) {
      std::cerr << "setup failed: " << setup->error << "\n";
    }
  }
  static void TearDownTestSuite() {
    if (setup != nullptr) setup->Cli("alice", "node daemon stop --profile work");
    delete setup;
    setup = nullptr;
  }
  void SetUp() override {
    if (setup == nullptr) GTEST_SKIP() << "the Codex CLI or openssh-server is not installed";
    ASSERT_TRUE(setup->error.empty()) << setup->error;
  }

  static json Result(const ShellRun& run) { return json::parse(run.out, nullptr, false); }
};

TEST_F(NyxidNodesTest, TheNodeIsOnlineAndRelaysTheAevatarProfileToTheHostsCodex) {
  const json nodes = Result(setup->Cli("alice", "node list --output json"));
  ASSERT_EQ(nodes["nodes"].size(), 1u);
  EXPECT_EQ(nodes["nodes"][0]["name"], "laptop");
  EXPECT_EQ(nodes["nodes"][0]["status"], "online");
  const json status = Result(setup->Cli("alice", "node daemon status --profile work"));
  EXPECT_EQ(status["state"], "online") << status;

  const ShellRun run = setup->Exec("alice", "box", setup->user);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json result = Result(run);
  EXPECT_EQ(result["exit_code"], 0);
  EXPECT_EQ(result["timed_out"], false);
  EXPECT_EQ(absl::StripAsciiWhitespace(result.value("stdout", "")), "CODEX_EXEC_READY") << result;
  EXPECT_EQ(setup->model->requests(), 1);
  // The registration token was single-use.
  const ShellRun again =
      setup->Cli("alice", absl::StrCat("node register --token ", setup->registration_token,
                                       " --url ws://127.0.0.1:", setup->nyxid->service().port(),
                                       "/api/v1/nodes/ws --profile other --encrypted-file"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(again.err, "REGISTRATION_TOKEN_INVALID")) << again.err;
}

TEST_F(NyxidNodesTest, EverythingButTheFixedProfileOnAnAllowedTargetIsRefusedTyped) {
  const int before = setup->model->requests();
  const ShellRun generic = setup->Exec("alice", "box", setup->user, "-- cat /etc/PLANTED-passwd");
  EXPECT_NE(generic.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(generic.err, "SSH_COMMAND_REFUSED")) << generic.err;
  EXPECT_TRUE(setup->nyxid->service().WaitForLog("nyxid.ssh_command_refused"));
  EXPECT_FALSE(absl::StrContains(setup->nyxid->service().ReadLog(), "PLANTED-passwd"));

  const ShellRun principal = setup->Exec("alice", "box", "mallory");
  EXPECT_TRUE(absl::StrContains(principal.err, "SSH_PRINCIPAL_NOT_ALLOWED")) << principal.err;

  // A second service on a port the node's profile does not allow.
  const ShellRun other = setup->Cli(
      "alice",
      absl::StrCat("service add-ssh --label other-box --host 127.0.0.1 --port 1 ", "--via-node ",
                   setup->node_id, " --node-key --principals ", setup->user));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const ShellRun outside = setup->Exec("alice", "other-box", setup->user);
  EXPECT_TRUE(absl::StrContains(outside.err, "SSH_TARGET_NOT_ALLOWED")) << outside.err;
  EXPECT_EQ(setup->model->requests(), before);
}

TEST_F(NyxidNodesTest, AnotherUserCannotSeeOrUseTheNodeOrTheService) {
  const json nodes = Result(setup->Cli("bob", "node list --output json"));
  EXPECT_TRUE(nodes["nodes"].empty()) << nodes;
  const ShellRun by_slug = setup->Exec("bob", "box", setup->user);
  EXPECT_TRUE(absl::StrContains(by_slug.err, "SSH_SERVICE_NOT_FOUND")) << by_slug.err;
  const json services = Result(setup->Cli("alice", "service list --output json"));
  std::string service_id;
  for (const json& entry : services) {
    if (entry.value("slug", "") == "box") service_id = entry.value("id", "");
  }
  ASSERT_FALSE(service_id.empty()) << services;
  const ShellRun by_id = setup->Exec("bob", service_id, setup->user);
  EXPECT_TRUE(absl::StrContains(by_id.err, "SSH_SERVICE_NOT_FOUND")) << by_id.err;
  const ShellRun via = setup->Cli(
      "bob", absl::StrCat("service add-ssh --label mine --host 127.0.0.1 --port 22 --via-node ",
                          setup->node_id, " --node-key --principals bob"));
  EXPECT_TRUE(absl::StrContains(via.err, "NODE_NOT_FOUND")) << via.err;
}

TEST_F(NyxidNodesTest, AChangedHostKeyIsATypedErrorAndNothingRunsUntilRotated) {
  const int before = setup->model->requests();
  const std::string wrapper_log = ReadProcFile(setup->d + "/wrapper.log");
  ASSERT_TRUE(setup->sshd->ChangeHostKey());
  const ShellRun changed = setup->Exec("alice", "box", setup->user);
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(changed.err, "SSH_HOST_KEY_MISMATCH")) << changed.err;
  EXPECT_EQ(setup->model->requests(), before);
  EXPECT_EQ(ReadProcFile(setup->d + "/wrapper.log"), wrapper_log);  // the host was never reached
  // `add` does not silently re-pin a changed key either.
  const ShellRun readd = RunShell(
      setup->d, absl::StrCat("NYXID_PROFILE=work XDG_CONFIG_HOME='", setup->d,
                             "/alice/cfg' XDG_DATA_HOME='", setup->d, "/alice/data' ",
                             BinaryPath("nyxid"), " node ssh-credentials add --service box",
                             " --principal ", setup->user, " --key-file '", setup->d,
                             "/node_key' --host 127.0.0.1 --port ", setup->sshd->port()));
  EXPECT_NE(readd.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(readd.err, "SSH_HOST_KEY_MISMATCH")) << readd.err;

  const ShellRun rotate = setup->Cli(
      "alice", absl::StrCat("node ssh-credentials --profile work rotate-host-key --host 127.0.0.1 "
                            "--port ",
                            setup->sshd->port()));
  ASSERT_EQ(rotate.exit_code, 0) << rotate.err;
  const ShellRun after = setup->Exec("alice", "box", setup->user);
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
}

TEST_F(NyxidNodesTest, AStoppedNodeIsOfflineAndTheDaemonReconnectsAfterNyxidRestarts) {
  ASSERT_EQ(setup->Cli("alice", "node daemon stop --profile work").exit_code, 0);
  EXPECT_EQ(setup->Cli("alice", "node daemon status --profile work").exit_code, 3);
  const ShellRun offline = setup->Exec("alice", "box", setup->user);
  EXPECT_TRUE(absl::StrContains(offline.err, "NODE_OFFLINE")) << offline.err;
  EXPECT_EQ(Result(setup->Cli("alice", "node list --output json"))["nodes"][0]["status"],
            "offline");

  ASSERT_EQ(setup->Cli("alice", "node daemon start --profile work").exit_code, 0);
  setup->nyxid->Restart({});
  ASSERT_TRUE(setup->nyxid->ok());
  // The daemon notices the dropped connection and comes back (backoff 1 s,
  // 2 s, …) with no help.
  bool online = false;
  for (int i = 0; i < 300 && !online; ++i) {
    const json nodes = Result(setup->Cli("alice", "node list --output json"));
    online =
        nodes.is_object() && !nodes["nodes"].empty() && nodes["nodes"][0]["status"] == "online";
    if (!online) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(online) << setup->DaemonLog();
  const ShellRun run = setup->Exec("alice", "box", setup->user);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(NyxidNodesTest, NoLogHoldsAKeyATokenOrThePrompt) {
  std::string private_key = ReadProcFile(setup->d + "/node_key");
  // One line of the key's body is enough to recognise it.
  const std::string key_line = private_key.substr(private_key.find('\n') + 1, 40);
  ASSERT_GT(key_line.size(), 20u);
  for (const std::string& log : {setup->nyxid->service().ReadLog(), setup->DaemonLog(),
                                 ReadProcFile(setup->d + "/wrapper.log")}) {
    EXPECT_FALSE(absl::StrContains(log, key_line));
    EXPECT_FALSE(absl::StrContains(log, setup->registration_token));
    EXPECT_FALSE(absl::StrContains(log, "nyxid_node_"));
    EXPECT_FALSE(absl::StrContains(log, "PLANTED-prompt"));
    EXPECT_FALSE(absl::StrContains(log, kHostApiKey));
  }
  // The profile keeps its secrets sealed, its key outside the profile.
  const std::string sealed = ReadProcFile(setup->d + "/alice/cfg/nyxid/nodes/work/credentials.enc");
  EXPECT_FALSE(sealed.empty());
  EXPECT_FALSE(absl::StrContains(sealed, key_line));
  EXPECT_FALSE(absl::StrContains(sealed, "nyxid_node_"));
}

}  // namespace
}  // namespace aevatar::testing
