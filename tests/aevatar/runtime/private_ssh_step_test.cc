// private_ssh codex_exec workflow steps: nothing runs before the owner
// approves the exact call; the wait is durable (callbacks, no thread) and
// survives a restart; denied or expired approvals fail typed; the exchange
// is made at most once, even across a crash; the result is NyxID's raw SSH
// response. NyxID's SSH route is a test double here (a function recording
// each call); the real route is tested in private_ssh_canary_test.
#include <optional>

#include "aevatar/approvals/approval_store.h"
#include "aevatar/approvals/private_ssh_gate.h"
#include "aevatar/runtime/codex_step_turns.h"
#include "base/api_error.h"
#include "runtime_fixture.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kPrivateWorkflow[] = R"yaml(
workflow_id: private-check
inputs:
  - {name: prompt, type: string}
steps:
  - id: p
    tool: codex_exec
    timeout_ms: 400000
    arguments:
      target:
        kind: private_ssh
        private_ssh: {service: "${inputs.prompt.service}", principal: "${inputs.prompt.principal}"}
      prompt: Reply with exactly CODEX_EXEC_READY
      timeout_secs: 300
    expect:
      equals: {exit_code: 0, timed_out: false}
      trimmed_output_equals: CODEX_EXEC_READY
)yaml";

struct SshCall {
  std::string credential, service, principal, prompt;
  int timeout_secs = 0;
};

json Raw(int exit_code, const std::string& out, bool timed_out = false) {
  return {{"exit_code", exit_code}, {"timed_out", timed_out}, {"stdout", out}, {"stderr", ""}};
}

class PrivateSshStepTest : public testing::RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    auto store = OpenSqliteApprovalStore(dir_ + "/approvals.db", vault_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_approvals_ = std::move(*store);
    approvals_ = store_approvals_.get();
    Answer([](const SshCall&) -> absl::StatusOr<json> { return Raw(0, "CODEX_EXEC_READY\n"); });
    UseWorkflow(kPrivateWorkflow);
  }

  // The double of NyxID's SSH route answers with `answer`.
  void Answer(std::function<absl::StatusOr<json>(const SshCall&)> answer) {
    answer_ = std::move(answer);
    private_ssh_ = [this](const std::string& credential, const CodexExecArgs& args,
                          std::chrono::milliseconds) -> absl::StatusOr<json> {
      calls_.push_back(
          {credential, args.ssh_service, args.ssh_principal, args.prompt, args.timeout_secs});
      return answer_(calls_.back());
    };
    runtime_ = MakeRuntime();
  }

  std::string StartPrivate() {
    Caller caller{CredentialKind::kHumanBearer, "user-1", "credential-secret-xyz", false};
    auto inputs = BindInputs(definition_, {{"prompt", R"({"service":"box","principal":"alice"})"}});
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    auto run_id = runtime_->StartRun(
        caller, definition_, *inputs, MakeAdmissionProof(testing::TestRoute(), now_),
        *CatalogFromFacts(testing::GrantingFacts(), testing::TestRoute(), now_));
    EXPECT_TRUE(run_id.ok()) << run_id.status();
    return run_id.ok() ? *run_id : "";
  }

  // Runs turns for a few seconds of the clock.
  void Wait(int seconds) {
    for (int i = 0; i < seconds; ++i) {
      runtime_->DrainDueForTest();
      now_ += 1000;
    }
  }

  std::string ApprovalOf(const std::string& run_id) {
    return State(run_id)["steps"][0].value("approval_id", "");
  }
  void Decide(const std::string& run_id, bool approve) {
    auto decided = approvals_->Decide("user-1", ApprovalOf(run_id), approve, now_);
    ASSERT_TRUE(decided.ok()) << decided.status();
  }
  std::string Outcome(const std::string& run_id) {
    return State(run_id)["steps"][0].value("outcome_code", "");
  }

  std::unique_ptr<ApprovalStore> store_approvals_;
  std::vector<SshCall> calls_;
  std::function<absl::StatusOr<json>(const SshCall&)> answer_;
};

TEST_F(PrivateSshStepTest, NothingRunsUntilTheOwnerApprovesThenTheCallRunsOnce) {
  const std::string run_id = StartPrivate();
  Wait(30);
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(State(run_id)["steps"][0]["status"], "awaiting_approval");
  EXPECT_EQ(EventCount(run_id, "step.approval_required"), 1);
  // The approval holds the exact call the step will make.
  auto approval = approvals_->Get("user-1", ApprovalOf(run_id));
  ASSERT_TRUE(approval.ok() && approval->has_value());
  EXPECT_EQ((*approval)->call["target"]["private_ssh"]["service"], "box");
  EXPECT_EQ((*approval)->call["prompt"], "Reply with exactly CODEX_EXEC_READY");

  Decide(run_id, true);
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].credential, "credential-secret-xyz");  // the run's sealed credential
  EXPECT_EQ(calls_[0].service, "box");
  EXPECT_EQ(calls_[0].principal, "alice");
  EXPECT_EQ(calls_[0].timeout_secs, 300);
  // The step's output is NyxID's raw SSH response, not the managed shape.
  const json output = State(run_id)["steps"][0]["output"];
  EXPECT_EQ(output, Raw(0, "CODEX_EXEC_READY\n"));
  EXPECT_EQ(EventCount(run_id, "step.approved"), 1);
  // Approved once, used once.
  approval = approvals_->Get("user-1", ApprovalOf(run_id));
  EXPECT_EQ((*approval)->state, ApprovalState::kUsed);
}

TEST_F(PrivateSshStepTest, DeniedAndExpiredApprovalsFailTheStepTyped) {
  const std::string denied = StartPrivate();
  Wait(3);
  Decide(denied, false);
  RunUntil([&] { return Phase(denied) == "failed"; });
  EXPECT_EQ(Outcome(denied), "approval_denied");

  const std::string expired = StartPrivate();
  Wait(3);
  now_ += kPrivateSshApprovalTtlMs;
  RunUntil([&] { return Phase(expired) == "failed"; });
  EXPECT_EQ(Outcome(expired), "approval_expired");
  EXPECT_TRUE(calls_.empty());
}

TEST_F(PrivateSshStepTest, AWaitingApprovalSurvivesARestart) {
  const std::string run_id = StartPrivate();
  Wait(3);
  runtime_ = MakeRuntime();  // nothing in memory survives
  Wait(3);
  EXPECT_TRUE(calls_.empty());
  Decide(run_id, true);
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  EXPECT_EQ(Phase(run_id), "succeeded");
  EXPECT_EQ(calls_.size(), 1u);
}

TEST_F(PrivateSshStepTest, ACrashDuringTheCallNeverRunsTheHostASecondTime) {
  Answer([](const SshCall&) -> absl::StatusOr<json> {
    throw std::runtime_error("aevatar died mid-exchange");
  });
  const std::string run_id = StartPrivate();
  Wait(3);
  Decide(run_id, true);
  RunUntil([&] { return calls_.size() == 1; });
  ASSERT_EQ(calls_.size(), 1u);
  Answer([](const SshCall&) -> absl::StatusOr<json> { return Raw(0, "CODEX_EXEC_READY"); });
  runtime_ = MakeRuntime();  // as after a restart
  // The sent call is judged once its exchange could no longer be running.
  now_ += 400'000;
  RunUntil([&] { return Phase(run_id) == "failed"; });
  EXPECT_EQ(Outcome(run_id), "private_ssh_outcome_uncertain");
  EXPECT_EQ(calls_.size(), 1u);
}

TEST_F(PrivateSshStepTest, TheCallRunsUnderTheRunsLeaseWhichTheMarkingCommitKeeps) {
  std::string run_id;
  std::optional<bool> free_during_call;
  Answer([&](const SshCall&) -> absl::StatusOr<json> {
    // RenewRunLease by a replica that never held it: false while another
    // (this runtime) holds the lease, true once it is free.
    auto free = store_->RenewRunLease(run_id, "replica-probe", now_, 1);
    if (free.ok()) free_during_call = *free;
    return Raw(0, "CODEX_EXEC_READY\n");
  });
  run_id = StartPrivate();
  Wait(3);
  Decide(run_id, true);
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  ASSERT_TRUE(free_during_call.has_value());
  EXPECT_FALSE(*free_during_call);
  // Given up with the run's last commit.
  EXPECT_TRUE(*store_->RenewRunLease(run_id, "replica-probe", now_, 1));
}

TEST_F(PrivateSshStepTest, ANonZeroExitATimeoutAndARouteErrorFailTyped) {
  const std::pair<absl::StatusOr<json>, std::string> cases[] = {
      {Raw(2, ""), "private_ssh_nonzero_exit"},
      {Raw(124, "", true), "private_ssh_timed_out"},
      {absl::Status(base::ApiError(absl::StatusCode::kUnavailable, "node_offline",
                                   "the node is offline", 503)),
       "node_offline"},
      {Raw(0, "CODEX_EXEC_READY and more"), "codex_exec_expectation_failed"},
  };
  for (const auto& [answer, code] : cases) {
    Answer([answer = answer](const SshCall&) { return answer; });
    const std::string run_id = StartPrivate();
    Wait(3);
    Decide(run_id, true);
    RunUntil([&] { return Phase(run_id) == "failed"; });
    EXPECT_EQ(Outcome(run_id), code);
  }
}

TEST_F(PrivateSshStepTest, AStopWhileAwaitingApprovalCancelsWithoutACall) {
  const std::string run_id = StartPrivate();
  Wait(3);
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  EXPECT_EQ(Phase(run_id), "stopped");
  EXPECT_TRUE(calls_.empty());
}

TEST_F(PrivateSshStepTest, WithoutApprovalsThePrivateTargetIsNotConfigured) {
  approvals_ = nullptr;
  runtime_ = MakeRuntime();
  const std::string run_id = StartPrivate();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  EXPECT_EQ(Outcome(run_id), kTargetNotConfigured);
}

}  // namespace
}  // namespace aevatar::orchestrator
