// Managed codex_exec end to end, as a user runs it: aevatar -> NyxID proxy ->
// chrono-sandbox /codex/execute -> the real Codex CLI in a one-shot sandbox
// -> the run's relay -> NyxID's chrono-llm-public route -> the model. Only
// the model is a double (responses-double; no provider is reachable here).
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "managed_codex_stack.h"
#include "nyxid_fixture.h"
#include "testing/gvisor_codex.h"

namespace aevatar::testing {
namespace {

using json = nlohmann::json;

class ManagedCodex : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ManagedCodexOptions options;
    options.backend = GetParam();
    stack_ = std::make_unique<ManagedCodexStack>(std::move(options));
    ASSERT_TRUE(stack_->ok());
    alice_ = stack_->Login("alice");
    ASSERT_FALSE(alice_.empty());
  }
  void Ready() {
    auto ensured = stack_->EnsureCredential(alice_);
    ASSERT_EQ(ensured.status, 200) << ensured.body;
    const json status = JsonOf(stack_->CredentialStatus(alice_));
    ASSERT_EQ(status.value("execution_ready", false), true) << status.dump();
    ASSERT_EQ(status.value("execution_readiness_reason", ""), "ready");
  }
  std::unique_ptr<ManagedCodexStack> stack_;
  std::string alice_;
};

TEST_P(ManagedCodex, TheCanaryAnswersExactlyThroughEveryLayer) {
  Ready();
  auto reply = stack_->Exec(
      alice_, ManagedCodexStack::ManagedArgs("Reply with exactly CODEX_EXEC_READY", 180));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json result = JsonOf(reply);
  EXPECT_EQ(result.value("status", ""), "succeeded");
  EXPECT_EQ(result.value("target", ""), "managed_sandbox");
  EXPECT_EQ(result.value("output", ""), "CODEX_EXEC_READY");
  EXPECT_EQ(result.value("exit_code", -1), 0);
  EXPECT_FALSE(result.value("diagnostic_id", "").empty());

  // The provider saw its own key, and never the user's delegation token.
  const std::vector<json> record = stack_->ModelRecord();
  ASSERT_FALSE(record.empty());
  for (const json& line : record) {
    EXPECT_EQ(line.value("authorization", ""), ManagedCodexStack::kProviderKey);
    EXPECT_FALSE(absl::StrContains(line.dump(), "eyJ")) << "a JWS reached the provider";
  }
}

TEST_P(ManagedCodex, CodexRunsTheModelsCommandInItsWorkspace) {
  if (GetParam() == "gvisor" && !testing::GvisorCodexCommandsEnabled()) {
    GTEST_SKIP() << testing::kGvisorCodexCommandSkip;
  }
  Ready();
  const std::string prompt =
      "Run `git rev-parse --is-inside-work-tree && echo \"CLEAN[$(git status --porcelain)]\" && "
      "printf 'print(6*7)\\n' > six.py && python3 six.py && pwd` and report its output";
  auto reply = stack_->Exec(alice_, ManagedCodexStack::ManagedArgs(prompt));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const std::string output = JsonOf(reply).value("output", "");
  EXPECT_TRUE(absl::StrContains(output, "true")) << output;
  // An empty repository: the run script and .aevatar/ are not in its tree.
  EXPECT_TRUE(absl::StrContains(output, "CLEAN[]")) << output;
  EXPECT_TRUE(absl::StrContains(output, "42")) << output;
  EXPECT_TRUE(absl::StrContains(output, "/workspace")) << output;
}

TEST_P(ManagedCodex, NothingInsideTheRunReachesAnythingButTheModelRoute) {
  if (GetParam() == "gvisor" && !testing::GvisorCodexCommandsEnabled()) {
    GTEST_SKIP() << testing::kGvisorCodexCommandSkip;
  }
  Ready();
  const auto port_of = [](const std::string& url) { return url.substr(url.rfind(':') + 1); };
  // Each probe prints OPEN-<name> only when the connection succeeds.
  std::string probes;
  for (const auto& [name, target] : std::vector<std::pair<std::string, std::string>>{
           {"nyxid", "127.0.0.1/" + port_of(stack_->stack().nyxid().url())},
           {"aevatar", "127.0.0.1/" + port_of(stack_->stack().aevatar().base_url())},
           {"chrono", "127.0.0.1/" + port_of(stack_->stack().chrono().base_url())},
           {"model", "127.0.0.1/" + std::to_string(stack_->model().port())},
           {"metadata", "169.254.169.254/80"},
           {"outside", "1.1.1.1/443"}}) {
    probes += "(timeout 3 bash -c 'exec 3<>/dev/tcp/" + target + "') 2>/dev/null && echo OPEN-" +
              name + "; ";
  }
  const std::string prompt =
      "Run `" + probes +
      "cat /proc/1/environ /proc/$PPID/environ 2>/dev/null | tr '\\\\0' '\\\\n' | "
      "grep -c NYXID_; env | grep -c NYXID_; echo PROBES-DONE` and report its output";
  auto reply = stack_->Exec(alice_, ManagedCodexStack::ManagedArgs(prompt));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const std::string output = JsonOf(reply).value("output", "");
  ASSERT_TRUE(absl::StrContains(output, "PROBES-DONE")) << output;
  EXPECT_FALSE(absl::StrContains(output, "OPEN-")) << output;
  EXPECT_FALSE(absl::StrContains(output, "eyJ")) << "the delegation token was readable";
  EXPECT_FALSE(absl::StrContains(output, ManagedCodexStack::kProviderKey));
}

INSTANTIATE_TEST_SUITE_P(Backends, ManagedCodex, ::testing::Values("gvisor", "native"));

}  // namespace
}  // namespace aevatar::testing
