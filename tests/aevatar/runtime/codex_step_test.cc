// codex_exec workflow steps: they call managed codex_exec (never /executions),
// durably, with a stable Idempotency-Key that a restarted aevatar re-sends,
// and the bundled canary's success rule holds exactly.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "absl/synchronization/notification.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/runtime/codex_step_turns.h"
#include "base/api_error.h"
#include "codex/fake_nyxid.h"
#include "runtime_fixture.h"
#include "testing/poll.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

struct CodexCall {
  std::string user, key, prompt;
  int timeout_secs = 0;
  bool managed = false;
  int64_t budget_ms = 0;
  std::vector<std::string> caller_services;
};

std::string CanaryYaml() {
  std::ifstream in(std::string(AEVATAR_SOURCE_DIR) +
                   "/skills/aevatar-codex-exec-workflow-sample/assets/codex-exec-check.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ManagedCodexResult Answer(const std::string& output, const std::string& status = "succeeded",
                          int exit_code = 0) {
  ManagedCodexResult result;
  result.status = status;
  result.target = "managed_sandbox";
  result.output = output;
  result.exit_code = exit_code;
  result.diagnostic_id = "diag_runner1";
  result.elapsed_ms = 250;
  return result;
}

class CodexStepTest : public testing::RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    canary_ = CanaryYaml();
    ASSERT_FALSE(canary_.empty());
    UseCodex([](const CodexCall&) { return Answer("CODEX_EXEC_READY\n"); });
    UseWorkflow(canary_.c_str());
  }

  void UseCodex(std::function<absl::StatusOr<ManagedCodexResult>(const CodexCall&)> answer) {
    answer_ = std::move(answer);
    codex_ =
        [this](
            const std::string& user, const CodexExecArgs& args, const std::string& key,
            const std::string&, std::chrono::milliseconds budget,
            const std::vector<std::string>& caller_services) -> absl::StatusOr<ManagedCodexResult> {
      CodexCall call{user,
                     key,
                     args.prompt,
                     args.timeout_secs,
                     args.target == CodexTarget::kManagedSandbox,
                     budget.count(),
                     caller_services};
      calls_.push_back(call);
      return answer_(call);
    };
    runtime_ = MakeRuntime();
  }

  json StepOutput(const std::string& run_id) { return State(run_id)["steps"][0]["output"]; }

  std::string canary_;
  std::vector<CodexCall> calls_;
  std::function<absl::StatusOr<ManagedCodexResult>(const CodexCall&)> answer_;
};

TEST_F(CodexStepTest, TheCanaryStepCallsCodexExecWithTheSpecsExactPayload) {
  EXPECT_EQ(definition_.steps[0].tool, "codex_exec");
  EXPECT_EQ(definition_.steps[0].timeout_ms, 360'000);
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded" || Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "succeeded") << State(run_id).dump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].user, "user-1");
  EXPECT_TRUE(calls_[0].managed);
  EXPECT_EQ(calls_[0].prompt, "Reply with exactly CODEX_EXEC_READY");
  EXPECT_EQ(calls_[0].timeout_secs, 180);
  // The exchange is capped by what is left of the step's 360 s, and the
  // managed request deadline (300 s) fits inside it.
  EXPECT_LE(calls_[0].budget_ms, 360'000);
  EXPECT_GT(calls_[0].budget_ms, 300'000);
  // Not code_execute: nothing reached /executions.
  EXPECT_TRUE(executor_.exchanges().empty());
  const json output = StepOutput(run_id);
  EXPECT_EQ(output["status"], "succeeded");
  EXPECT_EQ(output["target"], "managed_sandbox");
  EXPECT_EQ(output["output"], "CODEX_EXEC_READY\n");
  EXPECT_EQ(output["exit_code"], 0);
  EXPECT_EQ(output["diagnostic_id"], "diag_runner1");
  // The audit names the tool and its class.
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_FALSE(records->empty());
  const json receipt = records->back().fact["tool_payload"]["receipt"];
  EXPECT_EQ(receipt["tool"], "codex_exec");
  EXPECT_EQ(receipt["capability_class"], "RolloutRestrictedPlatform");
  // The raw key is in no state, event or audit record.
  EXPECT_EQ(State(run_id).dump().find(calls_[0].key), std::string::npos);
  EXPECT_EQ(records->back().fact.dump().find(calls_[0].key), std::string::npos);
}

TEST_F(CodexStepTest, TheIdempotencyKeyDerivesFromRunAndStepOnly) {
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(calls_.size(), 1u);
  const json arguments = definition_.steps[0].arguments;
  EXPECT_EQ(calls_[0].key,
            CodexStepIdempotencyKey(run_id, "codex_exec_check", definition_.digest, arguments));
  EXPECT_EQ(CodexStepIdempotencyKey(run_id, "codex_exec_check", definition_.digest, arguments),
            CodexStepIdempotencyKey(run_id, "codex_exec_check", definition_.digest, arguments));
  EXPECT_NE(calls_[0].key, CodexStepIdempotencyKey("run_other", "codex_exec_check",
                                                   definition_.digest, arguments));
  EXPECT_NE(calls_[0].key,
            CodexStepIdempotencyKey(run_id, "other_step", definition_.digest, arguments));
}

TEST_F(CodexStepTest, ARestartDuringTheExchangeReattachesWithTheSameKey) {
  // The first exchange dies with the process (its turn never commits).
  bool crashed = false;
  UseCodex([&](const CodexCall&) -> absl::StatusOr<ManagedCodexResult> {
    if (!crashed) {
      crashed = true;
      throw std::runtime_error("aevatar died mid-exchange");
    }
    return Answer("CODEX_EXEC_READY");
  });
  const std::string run_id = Start();
  RunUntil([&] { return crashed; });
  ASSERT_TRUE(crashed);
  EXPECT_NE(Phase(run_id), "succeeded");
  runtime_ = MakeRuntime();  // as after a restart: nothing in memory survives
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].key, calls_[1].key);  // chrono-sandbox attaches to the same run
  EXPECT_EQ(EventCount(run_id, "step.completed"), 1);
  EXPECT_EQ(EventCount(run_id, "step.submitted"), 1);
}

TEST_F(CodexStepTest, AStopDuringTheExchangeIsNotHeldUpAndTheRunStopsOnce) {
  // The exchange asks for a stop from another thread and waits (bounded)
  // for its answer: the run's lock must not be held while the exchange waits.
  std::string run_id;
  absl::Notification answered;
  std::atomic<bool> stop_ok{false};
  std::thread stopper;
  bool answered_during_exchange = false;
  UseCodex([&](const CodexCall&) -> absl::StatusOr<ManagedCodexResult> {
    if (!stopper.joinable()) {
      stopper = std::thread([&] {
        stop_ok = runtime_->RequestStop(run_id, "user-1").ok();
        answered.Notify();
      });
      answered_during_exchange = answered.WaitForNotificationWithTimeout(absl::Seconds(
          std::chrono::duration_cast<std::chrono::seconds>(::aevatar::testing::kHangGuard)
              .count()));
    }
    return Answer("CODEX_EXEC_READY");
  });
  run_id = Start();
  RunUntil([&] { return Phase(run_id) == "stopped" || Phase(run_id) == "succeeded"; });
  if (stopper.joinable()) stopper.join();  // after the turn: never while it holds the lock
  EXPECT_TRUE(answered_during_exchange);
  EXPECT_TRUE(stop_ok);
  EXPECT_EQ(Phase(run_id), "stopped");
  // The stale exchange turn was not committed; the stop's turn repeated the
  // call with the same key (chrono-sandbox attaches it to the same run).
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].key, calls_[1].key);
  EXPECT_EQ(EventCount(run_id, "step.completed"), 1);
}

// A stop while the step's exchange runs has chrono-sandbox kill the run
// (the canceller, with the step's own key, right after the stop is
// committed); the stop's turn replays the exchange, which then gets the
// killed run's "cancelled" answer.
TEST_F(CodexStepTest, AStopCancelsTheRunningCodexRunWithTheStepsKey) {
  std::string run_id;
  std::vector<std::string> order;
  std::vector<std::string> cancelled_keys;
  codex_cancel_ = [&](const std::string& user, const std::string& key, const std::string&,
                      const std::vector<std::string>&) {
    EXPECT_EQ(user, "user-1");
    cancelled_keys.push_back(key);
    order.push_back("cancel");
    return absl::OkStatus();
  };
  absl::Notification answered;
  std::thread stopper;
  UseCodex([&](const CodexCall&) -> absl::StatusOr<ManagedCodexResult> {
    order.push_back("exchange");
    if (!stopper.joinable()) {
      // The stop arrives while the run is going.
      stopper = std::thread([&] {
        EXPECT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
        answered.Notify();
      });
      answered.WaitForNotificationWithTimeout(absl::Seconds(30));
      return Answer("CODEX_EXEC_READY");
    }
    return Answer("", "cancelled", 137);  // chrono-sandbox: the killed run
  });
  run_id = Start();
  RunUntil([&] { return Phase(run_id) == "stopped" || Phase(run_id) == "succeeded"; });
  if (stopper.joinable()) stopper.join();
  EXPECT_EQ(Phase(run_id), "stopped");
  ASSERT_EQ(calls_.size(), 2u);
  ASSERT_EQ(cancelled_keys.size(), 1u);
  EXPECT_EQ(cancelled_keys[0], calls_[0].key);
  EXPECT_EQ(order, (std::vector<std::string>{"exchange", "cancel", "exchange"}));
  EXPECT_EQ(EventCount(run_id, "run.stop_requested"), 1);
  EXPECT_EQ(State(run_id)["steps"][0].value("outcome_code", ""), "managed_execution_cancelled");
}

TEST_F(CodexStepTest, ExtraModelTextFailsTheCanary) {
  UseCodex([](const CodexCall&) { return Answer("Sure! CODEX_EXEC_READY"); });
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], "codex_exec_expectation_failed");
}

TEST_F(CodexStepTest, AnEmptyDiagnosticIdFailsTheCanary) {
  UseCodex([](const CodexCall&) {
    ManagedCodexResult result = Answer("CODEX_EXEC_READY");
    result.diagnostic_id = "";
    return result;
  });
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
}

TEST_F(CodexStepTest, ANonZeroExitAndATypedErrorEndTheStepTyped) {
  UseCodex([](const CodexCall&) { return Answer("", "failed", 1); });
  std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], kManagedExecutionNonzeroExit);
  EXPECT_EQ(StepOutput(run_id)["exit_code"], 1);
  EXPECT_EQ(StepOutput(run_id)["diagnostic_id"], "diag_runner1");

  UseCodex([](const CodexCall&) -> absl::StatusOr<ManagedCodexResult> {
    return ManagedError(kManagedProxyTimeout, "the proxy request timed out");
  });
  run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], kManagedProxyTimeout);
  EXPECT_FALSE(StepOutput(run_id)["diagnostic_id"].get<std::string>().empty());
}

TEST_F(CodexStepTest, AnExchangeEndedByTheStepsBudgetIsTheStepTimeout) {
  UseCodex([](const CodexCall&) -> absl::StatusOr<ManagedCodexResult> {
    return ManagedError(kManagedBudgetExhausted, "the caller's remaining budget ended it");
  });
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], "codex_exec_step_timeout");
}

TEST_F(CodexStepTest, WithManagedCodexOffTheStepFailsBeforeAnyCall) {
  codex_ = nullptr;
  runtime_ = MakeRuntime();
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], kManagedTargetDisabled);
  EXPECT_TRUE(calls_.empty());
}

TEST_F(CodexStepTest, PrivateSshAndMixedShapesFailTypedBeforeAnyCall) {
  UseWorkflow(R"yaml(
workflow_id: private-check
steps:
  - id: p
    tool: codex_exec
    arguments:
      target: {kind: private_ssh, private_ssh: {service: svc, principal: me}}
      prompt: Reply with exactly CODEX_EXEC_READY
)yaml");
  std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], kTargetNotConfigured);
  UseWorkflow(R"yaml(
workflow_id: mixed-check
steps:
  - id: m
    tool: codex_exec
    arguments:
      target: {kind: managed_sandbox}
      workspace: {kind: empty_git}
      prompt: hi
      model: gpt-x
)yaml");
  run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  EXPECT_EQ(State(run_id)["steps"][0]["outcome_code"], "workflow_arguments_invalid");
  EXPECT_TRUE(calls_.empty());
}

// The runtime in front of a real ManagedCodex and the NyxID stand-in, the
// user's managed credential provisioned.
class ManagedCodexStepTest : public CodexStepTest {
 protected:
  void SetUp() override {
    CodexStepTest::SetUp();
    ASSERT_TRUE(nyxid_.ok());
    auto vault = OpenSqliteCredentialVault(":memory:",
                                           std::make_shared<VaultKeyring>(base::RandomBytes(32)));
    ASSERT_TRUE(vault.ok());
    vault_ = std::move(*vault);
    ManagedCodexConfig config;
    config.policy.mode = EligibilityMode::kAll;
    managed_ =
        std::make_unique<ManagedCodex>(&client_, vault_.get(), config, [] { return int64_t{1}; });
    ASSERT_TRUE(managed_
                    ->EnsureCredential(
                        {CredentialKind::kHumanBearer, testing::kUser, testing::kHumanToken, true},
                        "diag_t")
                    .ok());
    codex_ = [this](const std::string& user, const CodexExecArgs& args, const std::string& key,
                    const std::string& diagnostic_id, std::chrono::milliseconds budget,
                    const std::vector<std::string>& caller_services) {
      return managed_->Execute(user, args, key, diagnostic_id, budget, caller_services);
    };
    runtime_ = MakeRuntime();
  }

  testing::FakeNyxid nyxid_;
  NyxidClient client_{nyxid_.url(), ""};
  std::unique_ptr<ManagedCredentialVault> vault_;
  std::unique_ptr<ManagedCodex> managed_;
};

TEST_F(ManagedCodexStepTest, TheStepReachesCodexExecuteThroughTheExactProxyRoute) {
  testing::FakeNyxid& nyxid = nyxid_;
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded" || Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "succeeded") << State(run_id).dump();
  std::vector<testing::RecordedRequest> proxied;
  for (const auto& request : nyxid.Requests()) {
    if (request.path.rfind("/api/v1/proxy/", 0) == 0) proxied.push_back(request);
  }
  ASSERT_EQ(proxied.size(), 1u);
  EXPECT_EQ(proxied[0].path, "/api/v1/proxy/chrono-sandbox/codex/execute");
  EXPECT_EQ(proxied[0].query, std::string("_nyxid_via=") + testing::kChronoRouteId);
  EXPECT_EQ(proxied[0].idempotency_key,
            CodexStepIdempotencyKey(run_id, "codex_exec_check", definition_.digest,
                                    definition_.steps[0].arguments));
  EXPECT_EQ(json::parse(proxied[0].body)["prompt"], "Reply with exactly CODEX_EXEC_READY");
  EXPECT_EQ(nyxid.Count("/api/v1/proxy/chrono-sandbox/execute"), 0);
}

// A run started with an Agent Key restricted to some services keeps the
// restriction in its state: its managed codex_exec step runs only when the
// key names the chrono-sandbox route (NyxID sees only the managed key).
TEST_F(ManagedCodexStepTest, ARunOfARestrictedKeyRunsCodexOnlyOnTheRouteItNames) {
  const std::string refused =
      Start("MARKER_DEFAULT", CredentialKind::kAgentKey, {"some-other-service"});
  RunUntil([&] { return Phase(refused) == "failed" || Phase(refused) == "succeeded"; });
  ASSERT_EQ(Phase(refused), "failed") << State(refused).dump();
  EXPECT_EQ(State(refused)["steps"][0]["outcome_code"], "AGENT_KEY_SERVICE_NOT_ALLOWED");
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0) << "the refused key's run reached the proxy";
  const std::string allowed =
      Start("MARKER_DEFAULT", CredentialKind::kAgentKey, {testing::kChronoRouteId});
  RunUntil([&] { return Phase(allowed) == "failed" || Phase(allowed) == "succeeded"; });
  EXPECT_EQ(Phase(allowed), "succeeded") << State(allowed).dump();
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 1);
}

}  // namespace
}  // namespace aevatar::orchestrator
