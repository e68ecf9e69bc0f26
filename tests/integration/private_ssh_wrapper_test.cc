// The private_ssh forced-command wrapper (host/aevatar-codex-wrapper) as a
// user installs it: a real sshd on loopback, the wrapper as the forced
// command of each test key, the real Codex CLI as the host's own (logged in
// with an API key, its model the responses-double in this process), a real
// ssh client pinning the host key. The wrapper runs only the Aevatar command
// profile, in the configured Git workspace; everything else is a typed
// refusal that is logged without the refused text.
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "doubles/responses_double.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "testing/host_codex.h"
#include "testing/proc_file.h"
#include "testing/shell_run.h"
#include "testing/sshd_server.h"

namespace aevatar::testing {
namespace {

constexpr const char* kCodex = kHostCodex;
constexpr char kHostApiKey[] = "sk-host-own-key-PLANTED-31c7";
constexpr char kProfile[] = "aevatar-codex-exec v1 --timeout-secs 60";

class PrivateSshWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kCodex, X_OK) != 0) GTEST_SKIP() << "the Codex CLI is not installed";
    if (::access("/usr/sbin/sshd", X_OK) != 0) GTEST_SKIP() << "openssh-server is not installed";
    d_ = dir_.path();
    doubles::ResponsesDoubleOptions model;
    model.api_key = kHostApiKey;
    model.record_path = d_ + "/model.jsonl";
    auto started = doubles::ResponsesDouble::Start(model);
    ASSERT_TRUE(started.ok()) << started.status();
    model_ = std::move(*started);

    ASSERT_EQ(Shell("git init -q '" + d_ + "/ws' && mkdir '" + d_ + "/notgit'"), 0);
    ASSERT_TRUE(MakeHostCodexHome(d_, "codex-home", model_->port(), kHostApiKey, true));
    ASSERT_TRUE(MakeHostCodexHome(d_, "codex-home-logged-out", model_->port(), "", false));
    std::vector<std::string> lines;
    auto add_key = [&](const std::string& name, const std::string& home,
                       const std::string& options) {
      const std::string pub = MakeSshKey(d_ + "/" + name);
      ASSERT_FALSE(pub.empty());
      lines.push_back(WrapperKeyLine(d_, home, options, pub));
    };
    const std::string ws = absl::StrCat("--workspace ", d_, "/ws --codex ", kCodex);
    add_key("key", "codex-home", ws);
    add_key("key-notgit", "codex-home", absl::StrCat("--workspace ", d_, "/notgit"));
    add_key("key-nocodex", "codex-home",
            absl::StrCat("--workspace ", d_, "/ws --codex ", d_, "/no-codex"));
    add_key("key-loggedout", "codex-home-logged-out", ws);
    add_key("key-short", "codex-home", ws + " --max-timeout-secs 30");
    sshd_ = std::make_unique<SshdServer>(d_, lines);
    ASSERT_TRUE(sshd_->ok()) << sshd_->error();
    const passwd* user = ::getpwuid(::getuid());
    ASSERT_NE(user, nullptr);
    user_ = user->pw_name;
  }

  int Shell(const std::string& command) { return RunShell(d_, command).exit_code; }

  // ssh with `key` and `remote` (empty: none), the prompt `stdin_text` on stdin.
  ShellRun Ssh(const std::string& key, const std::string& remote, const std::string& stdin_text) {
    const std::string prompt = d_ + "/prompt.txt";
    std::ofstream(prompt, std::ios::binary | std::ios::trunc) << stdin_text;
    return RunShell(d_,
                    absl::StrCat("timeout 120 ssh -F /dev/null -T -i '", d_, "/", key,
                                 "' -o IdentitiesOnly=yes -o BatchMode=yes",
                                 " -o StrictHostKeyChecking=yes -o UserKnownHostsFile='",
                                 sshd_->known_hosts_path(), "' -p ", sshd_->port(), " ", user_,
                                 "@127.0.0.1", remote.empty() ? "" : " '" + remote + "'"),
                    prompt);
  }

  std::string Log() const { return ReadProcFile(d_ + "/wrapper.log"); }

  // Not under /tmp: Codex makes no helper aliases (codex-linux-sandbox,
  // which its workspace-write sandbox runs) in a CODEX_HOME under /tmp.
  TempDir dir_{"/var/tmp"};
  std::string d_;
  std::string user_;
  std::unique_ptr<doubles::ResponsesDouble> model_;
  std::unique_ptr<SshdServer> sshd_;
};

TEST_F(PrivateSshWrapperTest, TheProfileRunsTheHostsOwnCodexAndPrintsItsFinalMessage) {
  const ShellRun run = Ssh("key", kProfile, "Reply with exactly CODEX_EXEC_READY\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(absl::StripAsciiWhitespace(run.out), "CODEX_EXEC_READY") << run.err;
  // The model was called with the host's own credential.
  const std::string record = ReadProcFile(d_ + "/model.jsonl");
  ASSERT_FALSE(record.empty());
  EXPECT_EQ(nlohmann::json::parse(record.substr(0, record.find('\n')))["authorization"],
            kHostApiKey);
  // The log says what happened, never what was asked.
  EXPECT_TRUE(absl::StrContains(Log(), "started timeout_secs=60")) << Log();
  EXPECT_TRUE(absl::StrContains(Log(), "finished exit=0")) << Log();
  EXPECT_FALSE(absl::StrContains(Log(), "CODEX_EXEC_READY"));
}

TEST_F(PrivateSshWrapperTest, CodexWorksInTheConfiguredWorkspace) {
  const ShellRun run = Ssh("key", kProfile, "Run `pwd -P && touch made-by-codex`\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::string workspace = std::filesystem::canonical(d_ + "/ws").string();
  EXPECT_TRUE(absl::StrContains(run.out, workspace)) << run.out;
  EXPECT_TRUE(std::filesystem::exists(d_ + "/ws/made-by-codex"));
}

TEST_F(PrivateSshWrapperTest, AnyOtherRequestIsRefusedAndLoggedWithoutItsText) {
  for (const std::string& remote :
       {std::string("cat /etc/PLANTED-shadow-9f2"), std::string(""),
        std::string("aevatar-codex-exec v1 --timeout-secs 60 --PLANTED-flag"),
        std::string("aevatar-codex-exec v1 --timeout-secs 0"),
        std::string("aevatar-codex-exec v2 --timeout-secs 60"),
        std::string("aevatar-codex-exec v1 --timeout-secs 0060")}) {
    const ShellRun run = Ssh("key", remote, "Reply with exactly NOPE\n");
    EXPECT_EQ(run.exit_code, 2) << remote << "\n" << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, R"({"error":"host_command_refused")")) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
  const ShellRun above_max = Ssh("key-short", kProfile, "Reply with exactly NOPE\n");
  EXPECT_EQ(above_max.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(above_max.err, "above this host's maximum (30)")) << above_max.err;

  EXPECT_EQ(model_->requests(), 0);
  EXPECT_TRUE(absl::StrContains(Log(), "host_command_refused")) << Log();
  EXPECT_FALSE(absl::StrContains(Log(), "PLANTED")) << Log();
}

TEST_F(PrivateSshWrapperTest, AHostThatCannotRunCodexSaysWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"key-notgit", "host_workspace_not_git_root"},
      {"key-nocodex", "host_codex_not_found"},
      {"key-loggedout", "host_codex_not_logged_in"},
  };
  for (const auto& [key, code] : cases) {
    const ShellRun run = Ssh(key, kProfile, "Reply with exactly NOPE\n");
    EXPECT_EQ(run.exit_code, 2) << key << "\n" << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, absl::StrCat(R"({"error":")", code, "\"")))
        << key << "\n"
        << run.err;
  }
  EXPECT_EQ(model_->requests(), 0);
}

TEST_F(PrivateSshWrapperTest, PromptsMustBeNonEmptyAndAtMostOneMebibyte) {
  for (const std::string& prompt : {std::string(), std::string((1u << 20) + 1, 'x')}) {
    const ShellRun run = Ssh("key", kProfile, prompt);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, R"({"error":"host_prompt_invalid")")) << run.err;
  }
  EXPECT_EQ(model_->requests(), 0);
}

TEST_F(PrivateSshWrapperTest, ARunPastItsTimeoutIsKilledAndTyped) {
  const ShellRun run =
      Ssh("key", "aevatar-codex-exec v1 --timeout-secs 3", "[double:hang] Reply with exactly X\n");
  EXPECT_EQ(run.exit_code, 124) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, R"({"error":"host_codex_timed_out")")) << run.err;
  // The wrapper and the Codex it started are gone with the connection.
  EXPECT_TRUE(ProcessesMatching(d_ + "/wrapper.log").empty());
  const std::filesystem::path workspace = std::filesystem::canonical(d_ + "/ws");
  for (const pid_t pid : ProcessesMatching("exec --sandbox workspace-write")) {
    std::error_code ec;
    EXPECT_NE(std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec), workspace)
        << "Codex pid " << pid << " outlived its timeout";
  }
}

}  // namespace
}  // namespace aevatar::testing
