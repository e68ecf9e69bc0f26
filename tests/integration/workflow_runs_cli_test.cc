// Users find their work again, through the real binaries: a `workflow run
// --wait stream` whose connection breaks because aevatar was killed prints
// the run id first, resumes with Last-Event-ID (saying so on stderr) and
// ends with the run's result; the run is then found by `workflow list` and
// GET /api/workflow-runs (filters, pages), and followed by `workflow watch`.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "testing/shell_run.h"

extern char** environ;

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kRunsUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
  - {username: bob, password: pw-bob}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - {owner: {user: bob}, catalog_service_id: chrono-sandbox}
)yaml";

// A run long enough to kill aevatar in the middle of it.
constexpr char kSlowWorkflow[] = R"yaml(workflow_id: outlives-restart
steps:
  - id: sleeper
    tool: code_execute
    arguments:
      language: bash
      timeout_secs: 90
      source: |
        sleep 12
        echo RESUMED_OK
)yaml";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The aevatar CLI started in the background, its output in files.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env,
             const std::string& dir)
      : out_(dir + "/cli.out"), err_(dir + "/cli.err") {
    std::vector<std::string> argv_text = {BinaryPath("aevatar")};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_text) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text = env;
    for (char** e = environ; *e != nullptr; ++e) env_text.push_back(*e);
    std::vector<char*> envp;
    for (std::string& entry : env_text) envp.push_back(entry.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~CliProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  std::string out() const { return ReadText(out_); }
  std::string err() const { return ReadText(err_); }
  // The exit code once it has exited within `timeout`; -1 otherwise.
  int Wait(std::chrono::milliseconds timeout) {
    int status = 0;
    const bool done = PollUntil(
        [&] {
          if (exited_) return true;
          if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            exited_ = true;
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          }
          return exited_;
        },
        timeout);
    return done ? exit_code_ : -1;
  }

 private:
  std::string out_;
  std::string err_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

class WorkflowRunsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    stack_ = std::make_unique<AevatarStack>(kRunsUsers);
    ASSERT_TRUE(stack_->ok());
    token_ = stack_->Login("alice");
    ASSERT_FALSE(token_.empty());
    std::ofstream(dir_.path() + "/slow.yaml") << kSlowWorkflow;
  }
  // The CLI's environment: this stack's aevatar and alice's token, and a
  // private config directory (no stored session).
  std::vector<std::string> CliEnv() const {
    return {"AEVATAR_URL=" + stack_->aevatar().base_url(), "AEVATAR_TOKEN=" + token_,
            "XDG_CONFIG_HOME=" + dir_.path()};
  }
  ShellRun Cli(const std::string& args) {
    std::string env;
    for (const std::string& entry : CliEnv()) env += entry + " ";
    return RunShell(dir_.path(), env + BinaryPath("aevatar") + " " + args);
  }

  TempDir dir_;
  std::unique_ptr<AevatarStack> stack_;
  std::string token_;
};

TEST_F(WorkflowRunsCli, StreamSurvivesAKilledAevatarAndTheRunIsFoundAgain) {
  CliProcess cli({"workflow", "run", "--file", dir_.path() + "/slow.yaml", "--wait", "stream"},
                 CliEnv(), dir_.path());
  ASSERT_TRUE(cli.started());
  // The run id is the first line, before any event; kill aevatar once the
  // step is under way.
  ASSERT_TRUE(PollUntil([&] { return cli.out().find("step.submitted") != std::string::npos; },
                        std::chrono::seconds(120)))
      << cli.out() << cli.err();
  const std::string run_id = Lines(cli.out()).front();
  ASSERT_EQ(run_id.rfind("run_", 0), 0u) << cli.out();
  stack_->RestartAevatar(/*hard=*/true);
  ASSERT_TRUE(stack_->aevatar().ok());

  const int exit_code = cli.Wait(std::chrono::seconds(180));
  const std::string out = cli.out();
  const std::string err = cli.err();
  ASSERT_EQ(exit_code, 0) << out << err;
  EXPECT_EQ(Lines(out).front(), run_id);
  EXPECT_NE(err.find("lost " + run_id + "'s event stream"), std::string::npos) << err;
  EXPECT_NE(err.find("resumed " + run_id + "'s events after event "), std::string::npos) << err;
  EXPECT_NE(err.find("(Last-Event-ID)"), std::string::npos) << err;
  // Replayed after the last id seen: no event twice, and the result at the end.
  EXPECT_EQ(Count(out, "step.submitted"), 1u) << out;
  EXPECT_EQ(Count(out, "step.completed"), 1u) << out;
  EXPECT_NE(out.find("run " + run_id + " (outlives-restart): succeeded"), std::string::npos) << out;
  EXPECT_NE(out.find("RESUMED_OK"), std::string::npos) << out;

  // Found again: the listing (newest first, by status and workflow), the
  // CLI's list, and watch on the finished run.
  auto listed = stack_->Aevatar("GET",
                                "/api/workflow-runs?status=succeeded&workflow_id="
                                "outlives-restart&limit=1",
                                token_);
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(JsonOf(listed)["runs"].size(), 1u) << listed.body;
  EXPECT_EQ(JsonOf(listed)["runs"][0].value("run_id", ""), run_id);
  EXPECT_TRUE(
      JsonOf(stack_->Aevatar("GET", "/api/workflow-runs?status=failed", token_))["runs"].empty());
  const ShellRun list = Cli("workflow list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out)["runs"][0].value("run_id", ""), run_id) << list.out;
  const ShellRun watch = Cli("workflow watch " + run_id);
  ASSERT_EQ(watch.exit_code, 0) << watch.out << watch.err;
  EXPECT_EQ(Lines(watch.out).front(), run_id);
  EXPECT_NE(watch.out.find("succeeded"), std::string::npos) << watch.out;
  // Bob sees none of it.
  const std::string bob = stack_->Login("bob");
  EXPECT_TRUE(JsonOf(stack_->Aevatar("GET", "/api/workflow-runs", bob))["runs"].empty());
  EXPECT_EQ(stack_->Aevatar("GET", "/api/workflow-runs/" + run_id + "/events", bob).status, 404);
}

TEST_F(WorkflowRunsCli, ListingPagesAndRejectsBadParameters) {
  std::vector<std::string> started;
  for (int i = 0; i < 3; ++i) {
    const ShellRun run = Cli("workflow run --file " + dir_.path() + "/slow.yaml");
    // The run id alone on the first line (wait none).
    ASSERT_EQ(run.exit_code, 0) << run.err;
    started.push_back(Lines(run.out).front());
  }
  std::vector<std::string> seen;
  std::string cursor;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto r = stack_->Aevatar(
        "GET", "/api/workflow-runs?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor), token_);
    ASSERT_EQ(r.status, 200) << r.body;
    const json page = JsonOf(r);
    EXPECT_LE(page["runs"].size(), 2u);
    for (const json& run : page["runs"]) seen.push_back(run.value("run_id", ""));
    cursor = page.value("next_cursor", "");
    if (cursor.empty()) break;
  }
  // Every run once across the pages (newest first is the store suites' to
  // check: runs started in one millisecond order by id).
  EXPECT_EQ(seen.size(), started.size());
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()),
            std::set<std::string>(started.begin(), started.end()));
  for (const char* bad : {"limit=0", "limit=abc", "cursor=xyz", "status=done"}) {
    auto r = stack_->Aevatar("GET", std::string("/api/workflow-runs?") + bad, token_);
    EXPECT_EQ(r.status, 400) << bad << r.body;
    EXPECT_FALSE(JsonOf(r).value("diagnostic_id", "").empty()) << r.body;
  }
  http::ClientRequest events;
  events.url = stack_->aevatar().base_url() + "/api/workflow-runs/" + started[0] + "/events";
  events.headers.Set("Authorization", "Bearer " + token_);
  events.headers.Set("Last-Event-ID", "not-a-number");
  auto bad_id = http::Fetch(events);
  ASSERT_TRUE(bad_id.ok());
  EXPECT_EQ(bad_id->status, 400);
  EXPECT_EQ(JsonOf(*bad_id).value("code", ""), "INVALID_LAST_EVENT_ID");
  for (const std::string& id : started) {
    stack_->Aevatar("POST", "/api/workflow-runs/" + id + "/stop", token_, "{}");
  }
}

}  // namespace
}  // namespace aevatar::testing
