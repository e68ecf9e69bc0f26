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
#include "private_ssh_world.h"
#include "service_process.h"
#include "testing/host_codex.h"
#include "testing/proc_file.h"
#include "testing/shell_run.h"
#include "testing/sshd_server.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kPrompt[] = "PLANTED-prompt-5e3: Reply with exactly CODEX_EXEC_READY";

// The user's world and the broker it talks to.
struct NodeWorld {
  PrivateSshWorld world;
  std::unique_ptr<NyxidFixture> nyxid;
  std::string error;

  bool Build() {
    if (!world.BuildHost()) return Fail(world.error());
    nyxid = std::make_unique<NyxidFixture>(
        "users:\n  - {username: alice, password: \"alice pw 1\"}\n"
        "  - {username: bob, password: \"bob pw 1\"}\n");
    if (!nyxid->ok()) return Fail("nyxid did not start");
    if (!world.RegisterNode(nyxid->url(), "alice", "alice pw 1")) return Fail(world.error());
    if (!world.Login("bob", "bob pw 1")) return Fail("login bob");
    return true;
  }
  bool Fail(const std::string& why) {
    error = why;
    return false;
  }
  ShellRun Cli(const std::string& who, const std::string& args) { return world.Cli(who, args); }
  ShellRun Exec(const std::string& who, const std::string& service, const std::string& principal,
                const std::string& extra = "") {
    return world.Exec(who, service, principal, kPrompt, extra);
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
  // A systemd unit where systemd runs; where it does not, `install` says so.
  const ShellRun install = setup->Cli("alice", "node daemon install --profile work");
  EXPECT_EQ(install.exit_code, 0) << install.err;
  if (::access("/run/systemd/system", F_OK) == 0) {
    EXPECT_TRUE(absl::StrContains(install.out, "nyxid-node-work.service")) << install.out;
  } else {
    EXPECT_TRUE(absl::StrContains(install.out, "systemd does not run")) << install.out;
  }

  const ShellRun run = setup->Exec("alice", "box", setup->world.user());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json result = Result(run);
  EXPECT_EQ(result["exit_code"], 0);
  EXPECT_EQ(result["timed_out"], false);
  EXPECT_EQ(absl::StripAsciiWhitespace(result.value("stdout", "")), "CODEX_EXEC_READY") << result;
  EXPECT_EQ(setup->world.model().requests(), 1);
  // The registration token was single-use.
  const ShellRun again =
      setup->Cli("alice", absl::StrCat("node register --token ", setup->world.registration_token(),
                                       " --url ws://127.0.0.1:", setup->nyxid->service().port(),
                                       "/api/v1/nodes/ws --profile other --encrypted-file"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(again.err, "REGISTRATION_TOKEN_INVALID")) << again.err;
}

TEST_F(NyxidNodesTest, EverythingButTheFixedProfileOnAnAllowedTargetIsRefusedTyped) {
  const int before = setup->world.model().requests();
  const ShellRun generic =
      setup->Exec("alice", "box", setup->world.user(), "-- cat /etc/PLANTED-passwd");
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
                   setup->world.node_id(), " --node-key --principals ", setup->world.user()));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const ShellRun outside = setup->Exec("alice", "other-box", setup->world.user());
  EXPECT_TRUE(absl::StrContains(outside.err, "SSH_TARGET_NOT_ALLOWED")) << outside.err;
  EXPECT_EQ(setup->world.model().requests(), before);
}

TEST_F(NyxidNodesTest, AnotherUserCannotSeeOrUseTheNodeOrTheService) {
  const json nodes = Result(setup->Cli("bob", "node list --output json"));
  EXPECT_TRUE(nodes["nodes"].empty()) << nodes;
  const ShellRun by_slug = setup->Exec("bob", "box", setup->world.user());
  EXPECT_TRUE(absl::StrContains(by_slug.err, "SSH_SERVICE_NOT_FOUND")) << by_slug.err;
  const json services = Result(setup->Cli("alice", "service list --output json"));
  std::string service_id;
  for (const json& entry : services) {
    if (entry.value("slug", "") == "box") service_id = entry.value("id", "");
  }
  ASSERT_FALSE(service_id.empty()) << services;
  const ShellRun by_id = setup->Exec("bob", service_id, setup->world.user());
  EXPECT_TRUE(absl::StrContains(by_id.err, "SSH_SERVICE_NOT_FOUND")) << by_id.err;
  const ShellRun via = setup->Cli(
      "bob", absl::StrCat("service add-ssh --label mine --host 127.0.0.1 --port 22 --via-node ",
                          setup->world.node_id(), " --node-key --principals bob"));
  EXPECT_TRUE(absl::StrContains(via.err, "NODE_NOT_FOUND")) << via.err;
}

TEST_F(NyxidNodesTest, AChangedHostKeyIsATypedErrorAndNothingRunsUntilRotated) {
  const int before = setup->world.model().requests();
  const std::string wrapper_log = setup->world.WrapperLog();
  ASSERT_TRUE(setup->world.sshd().ChangeHostKey());
  const ShellRun changed = setup->Exec("alice", "box", setup->world.user());
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(changed.err, "SSH_HOST_KEY_MISMATCH")) << changed.err;
  EXPECT_EQ(setup->world.model().requests(), before);
  EXPECT_EQ(setup->world.WrapperLog(), wrapper_log);  // the host was never reached
  // `add` does not silently re-pin a changed key either.
  const ShellRun readd = setup->world.AddCredential("alice");
  EXPECT_NE(readd.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(readd.err, "SSH_HOST_KEY_MISMATCH")) << readd.err;

  const ShellRun rotate = setup->Cli(
      "alice", absl::StrCat("node ssh-credentials --profile work rotate-host-key --host 127.0.0.1 "
                            "--port ",
                            setup->world.sshd().port()));
  ASSERT_EQ(rotate.exit_code, 0) << rotate.err;
  const ShellRun after = setup->Exec("alice", "box", setup->world.user());
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
}

TEST_F(NyxidNodesTest, AStoppedNodeIsOfflineAndTheDaemonReconnectsAfterNyxidRestarts) {
  ASSERT_EQ(setup->Cli("alice", "node daemon stop --profile work").exit_code, 0);
  EXPECT_EQ(setup->Cli("alice", "node daemon status --profile work").exit_code, 3);
  const ShellRun offline = setup->Exec("alice", "box", setup->world.user());
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
  ASSERT_TRUE(online) << setup->world.DaemonLog("alice");
  const ShellRun run = setup->Exec("alice", "box", setup->world.user());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(NyxidNodesTest, NoLogHoldsAKeyATokenOrThePrompt) {
  std::string private_key = ReadProcFile(setup->world.dir() + "/node_key");
  // One line of the key's body is enough to recognise it.
  const std::string key_line = private_key.substr(private_key.find('\n') + 1, 40);
  ASSERT_GT(key_line.size(), 20u);
  for (const std::string& log : {setup->nyxid->service().ReadLog(), setup->world.DaemonLog("alice"),
                                 setup->world.WrapperLog()}) {
    EXPECT_FALSE(absl::StrContains(log, key_line));
    EXPECT_FALSE(absl::StrContains(log, setup->world.registration_token()));
    EXPECT_FALSE(absl::StrContains(log, "nyxid_node_"));
    EXPECT_FALSE(absl::StrContains(log, "PLANTED-prompt"));
    EXPECT_FALSE(absl::StrContains(log, PrivateSshWorld::kHostApiKey));
  }
  // The profile keeps its secrets sealed, its key outside the profile.
  const std::string sealed =
      ReadProcFile(setup->world.dir() + "/alice/cfg/nyxid/nodes/work/credentials.enc");
  EXPECT_FALSE(sealed.empty());
  EXPECT_FALSE(absl::StrContains(sealed, key_line));
  EXPECT_FALSE(absl::StrContains(sealed, "nyxid_node_"));
}

}  // namespace
}  // namespace aevatar::testing
