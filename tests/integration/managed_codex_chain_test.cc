// Managed codex_exec across the real layers: the deadline chain with scaled
// deadlines (each outer layer observes the inner timeout as its own typed
// error), a workflow step that survives an aevatar crash without running
// Codex twice, eight concurrent runs, and planted secrets that never show up.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "managed_codex_stack.h"
#include "nyxid_fixture.h"
#include "testing/poll.h"
#include "testing/proc_file.h"

namespace aevatar::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The native backend keeps these tests quick; the gVisor path is covered by
// managed_codex_test.
std::unique_ptr<ManagedCodexStack> NativeStack(std::vector<std::string> aevatar_args = {},
                                               std::vector<std::string> nyxid_args = {}) {
  ManagedCodexOptions options;
  options.backend = "native";
  options.aevatar_args = std::move(aevatar_args);
  options.nyxid_args = std::move(nyxid_args);
  return std::make_unique<ManagedCodexStack>(std::move(options));
}

std::string ReadyUser(ManagedCodexStack& stack) {
  const std::string token = stack.Login("alice");
  EXPECT_EQ(stack.EnsureCredential(token).status, 200);
  return token;
}

std::string CodeOf(const http::ClientResponse& reply) { return JsonOf(reply).value("code", ""); }

// The processes below `root` (by parent pid), from /proc.
std::vector<pid_t> DescendantsOf(pid_t root) {
  std::map<pid_t, pid_t> parent = ParentPids();
  std::vector<pid_t> below;
  for (const auto& [pid, ppid] : parent) {
    for (pid_t up = ppid; up > 1; up = parent.count(up) ? parent[up] : 0) {
      if (up == root) {
        below.push_back(pid);
        break;
      }
    }
  }
  return below;
}

int64_t SecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
}

TEST(ManagedCodexDeadlines, TheCodexRunTimeoutReachesTheCallerAsATerminalNonzeroExit) {
  auto stack = NativeStack();
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  auto reply = stack->Exec(token, ManagedCodexStack::ManagedArgs("[double:hang] think", 2));
  EXPECT_EQ(CodeOf(reply), "managed_execution_nonzero_exit") << reply.body;
  EXPECT_EQ(JsonOf(reply)["result"].value("status", ""), "timed_out") << reply.body;
}

TEST(ManagedCodexDeadlines, AevatarsRequestDeadlineEndsAnExchangeTheRunnerHasNotAnswered) {
  auto stack = NativeStack({"--managed-request-deadline-ms", "2000"});
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  const auto start = Clock::now();
  auto reply = stack->Exec(token, ManagedCodexStack::ManagedArgs("[double:hang] think", 60));
  EXPECT_EQ(CodeOf(reply), "managed_proxy_timeout") << reply.body;
  EXPECT_LT(SecondsSince(start), 60) << "the runner's own timeout ended it, not aevatar's";
}

TEST(ManagedCodexDeadlines, NyxidsIngressDeadlineIsObservedByAevatarAsAProxyTimeout) {
  auto stack = NativeStack({}, {"--proxy-timeout-ms", "2000"});
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  const auto start = Clock::now();
  auto reply = stack->Exec(token, ManagedCodexStack::ManagedArgs("[double:hang] think", 60));
  EXPECT_EQ(CodeOf(reply), "managed_proxy_timeout") << reply.body;
  EXPECT_LT(SecondsSince(start), 60);
}

TEST(ManagedCodexDeadlines, AWorkflowStepTimeoutEndsTheStepWithItsTypedError) {
  auto stack = NativeStack();
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  const std::string yaml = R"(workflow_id: codex-step-deadline
steps:
  - id: slow_codex
    tool: codex_exec
    timeout_ms: 2000
    arguments:
      target: {kind: managed_sandbox}
      workspace: {kind: empty_git}
      prompt: "[double:hang] think"
      timeout_secs: 60
)";
  auto started = stack->stack().Aevatar("POST", "/api/workflow-runs", token,
                                        json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_id = JsonOf(started).value("run_id", "");
  json run;
  ASSERT_TRUE(PollUntil([&] {
    run = JsonOf(stack->stack().Aevatar("GET", "/api/workflow-runs/" + run_id, token));
    return run.value("done", false);
  }));
  EXPECT_EQ(run.value("status", ""), "failed") << run.dump();
  EXPECT_TRUE(absl::StrContains(run.dump(), "codex_exec_step_timeout")) << run.dump();
}

TEST(ManagedCodexWorkflow, AnAevatarCrashMidRunNeitherLosesNorRepeatsTheCodexRun) {
  auto stack = NativeStack();
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  // Codex runs a command that takes a few seconds: long enough to crash
  // aevatar while chrono-sandbox runs it.
  const std::string yaml = R"(workflow_id: codex-crash
steps:
  - id: crash_me
    tool: codex_exec
    timeout_ms: 360000
    arguments:
      target: {kind: managed_sandbox}
      workspace: {kind: empty_git}
      prompt: "Run `sleep 4; echo ran-once` and report its output"
      timeout_secs: 120
)";
  auto started = stack->stack().Aevatar("POST", "/api/workflow-runs", token,
                                        json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_id = JsonOf(started).value("run_id", "");
  // Codex is running once the model has been asked for its first turn.
  ASSERT_TRUE(PollUntil([&] { return !stack->ModelRecord().empty(); }));
  stack->stack().RestartAevatar(/*hard=*/true);
  ASSERT_TRUE(stack->stack().aevatar().ok());

  json run;
  ASSERT_TRUE(PollUntil([&] {
    run = JsonOf(stack->stack().Aevatar("GET", "/api/workflow-runs/" + run_id, token));
    return run.value("done", false);
  }));
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_TRUE(absl::StrContains(run["steps"][0]["output"].value("output", ""), "ran-once"))
      << run.dump();
  // One Codex run asks the model twice (the command, then the answer); a
  // repeated run would have asked again.
  EXPECT_EQ(stack->ModelRecord().size(), 2u);
}

TEST(ManagedCodexLoad, EightConcurrentRunsAllAnswerAndLeaveNothingBehind) {
  auto stack = NativeStack();
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  std::vector<std::future<http::ClientResponse>> runs;
  for (int i = 0; i < 8; ++i) {
    runs.push_back(std::async(std::launch::async, [&stack, &token, i] {
      return stack->Exec(
          token, ManagedCodexStack::ManagedArgs(absl::StrCat("Reply with exactly RUN-", i, "-OK")));
    }));
  }
  for (int i = 0; i < 8; ++i) {
    const http::ClientResponse reply = runs[i].get();
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(JsonOf(reply).value("output", ""), absl::StrCat("RUN-", i, "-OK"));
  }
  // Nothing chrono-sandbox started for the runs (init, Codex, its
  // children) outlives them.
  const pid_t chrono = stack->stack().chrono().pid();
  EXPECT_TRUE(PollUntil([&] { return DescendantsOf(chrono).empty(); }))
      << DescendantsOf(chrono).size() << " processes of the runs are left";
}

TEST(ManagedCodexSecrets, PlantedKeysAndTokensAppearInNoResponseLogOrState) {
  auto stack = NativeStack();
  ASSERT_TRUE(stack->ok());
  const std::string token = ReadyUser(*stack);
  std::string responses;
  responses += stack->CredentialStatus(token).body;
  responses += stack->EnsureCredential(token).body;
  responses += stack->Exec(token, ManagedCodexStack::ManagedArgs("Reply with exactly X")).body;
  responses += stack->Exec(token, ManagedCodexStack::ManagedArgs("[double:500] fail")).body;
  responses += stack->stack().Aevatar("GET", "/api/capabilities/codex_exec/readiness", token).body;
  const std::string everything = responses + stack->AllStateAndLogs();
  EXPECT_FALSE(absl::StrContains(everything, ManagedCodexStack::kProviderKey));
  // Delegation tokens (NYXID_LLM_TOKEN's source) and access tokens are JWS:
  // none in any response, log or state file.
  EXPECT_FALSE(absl::StrContains(everything, "eyJ"));
  EXPECT_FALSE(absl::StrContains(everything, token));
  // The invocation key is an Agent Key: NyxID keeps its hash and a short
  // prefix; no whole key may appear anywhere.
  size_t at = 0;
  while ((at = everything.find("nyxid_ag_", at)) != std::string::npos) {
    size_t end = at + 9;
    while (end < everything.size() && (std::isalnum(static_cast<unsigned char>(everything[end])) ||
                                       everything[end] == '_' || everything[end] == '-')) {
      ++end;
    }
    EXPECT_LT(end - at, 20u) << "a whole Agent Key: " << everything.substr(at, 24) << "…";
    at = end;
  }
}

}  // namespace
}  // namespace aevatar::testing
