// Upstream input never crashes the runtime: malformed executor replies end
// the step typed (code_execution_response_invalid, with a diagnostic id), and
// a turn that throws is retried with bounded backoff and then failed typed.
#include <chrono>
#include <thread>
#include <vector>

#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/run_turns.h"
#include "runtime_fixture.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class MalformedReplyTest : public testing::RuntimeFixture {
 protected:
  json Receipt() { return {{"operation_id", "op_abc123"}, {"status", "queued"}}; }

  // The failed step of a finished run, after checking the run failed typed.
  json FailedStep(const std::string& run_id) {
    EXPECT_EQ(Phase(run_id), "failed");
    json state = State(run_id);
    EXPECT_EQ(state.value("outcome_code", ""), "step_failed");
    return state["steps"][0];
  }

  // Runs the runtime's own threads until `done`, advancing the clock ten
  // times as fast as real time: a 1 s Retry-After passes in 100 ms, while the
  // step's 90 s budget still leaves 9 s of real time for the turns' commits
  // under a sanitizer. Gives up after 30 s of real time.
  void RunThreadedUntil(const std::function<bool()>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      now_ += 100;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

TEST_F(MalformedReplyTest, StatusOfTheWrongTypeFailsTheStepTyped) {
  testing::ScriptedExecutor scripted;
  scripted.Then(202, Receipt()).Then(200, {{"operation_id", "op_abc123"}, {"status", 5}});
  scripted_ = &scripted;
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  const json step = FailedStep(run_id);
  EXPECT_EQ(step.value("outcome_code", ""), kOutcomeResponseInvalid);
  EXPECT_EQ(step.value("diagnostic_id", "").rfind("diag_", 0), 0u) << step.dump();
  EXPECT_TRUE(scripted.drained());
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_FALSE(records->empty());
  EXPECT_EQ(records->back().fact.value("outcome", ""), kOutcomeResponseInvalid);
}

TEST_F(MalformedReplyTest, ResultDocumentsOfTheWrongShapeFailTheStepTyped) {
  json stdout_array = {{"status", "succeeded"}, {"success", true}, {"stdout", json::array()}};
  json exit_code_text = {{"status", "succeeded"}, {"success", true}, {"exit_code", "0"}};
  for (const json& result : {stdout_array, exit_code_text, json::array(), json("ok")}) {
    testing::ScriptedExecutor scripted;
    scripted.Then(202, Receipt())
        .Then(200, {{"operation_id", "op_abc123"}, {"status", "succeeded"}})
        .Then(200, result);
    scripted_ = &scripted;
    const std::string run_id = Start();
    RunUntil([&] { return Phase(run_id) == "failed"; });
    const json step = FailedStep(run_id);
    EXPECT_EQ(step.value("outcome_code", ""), kOutcomeResponseInvalid) << result.dump();
    EXPECT_FALSE(step.value("diagnostic_id", "").empty());
    EXPECT_TRUE(scripted.drained()) << result.dump();
  }
}

TEST_F(MalformedReplyTest, TheRuntimeThreadsSurviveAMalformedResultAndServeTheNextRun) {
  testing::ScriptedExecutor scripted;
  scripted.Then(202, Receipt())
      .Then(200, {{"operation_id", "op_abc123"}, {"status", "succeeded"}})
      .Then(200, {{"status", "succeeded"}, {"success", true}, {"stdout", json::array()}});
  scripted_ = &scripted;
  runtime_->Start();
  const std::string broken = Start();
  RunThreadedUntil([&] { return Phase(broken) == "failed"; });
  EXPECT_EQ(FailedStep(broken).value("outcome_code", ""), kOutcomeResponseInvalid);
  scripted_ = nullptr;  // the fake executor answers the next run well
  const std::string healthy = Start();
  RunThreadedUntil([&] { return Phase(healthy) == "succeeded"; });
  EXPECT_EQ(Phase(healthy), "succeeded");
  runtime_->Stop();
}

TEST_F(MalformedReplyTest, AMalformedCancelReplyProvesNothingAndTheDeadlineStillHolds) {
  testing::ScriptedExecutor scripted;
  const json running = {{"operation_id", "op_abc123"}, {"status", "running"}};
  // RunUntil drains once more after its condition holds: two status reads.
  scripted.Then(202, Receipt()).Then(200, running).Then(200, running);
  for (int i = 0; i < 30; ++i) scripted.Then(200, {{"status", 5}});
  scripted_ = &scripted;
  const std::string run_id = Start();
  RunUntil([&] { return scripted.Count("Status") == 1; });
  auto deadline = runtime_->RequestStop(run_id, "user-1");
  ASSERT_TRUE(deadline.ok()) << deadline.status();
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  ASSERT_EQ(Phase(run_id), "stopped");
  EXPECT_GE(scripted.Count("Cancel"), 1);
  EXPECT_EQ(State(run_id)["steps"][0].value("outcome_code", ""),
            "code_execution_cancel_outcome_uncertain");
}

TEST_F(MalformedReplyTest, ATurnThatThrowsIsRetriedWithBoundedBackoffThenFailedTyped) {
  // A step budget longer than all the retries (else the step times out first).
  UseWorkflow(R"yaml(
workflow_id: throwing
steps:
  - id: only
    tool: code_execute
    timeout_ms: 600000
    arguments: {language: bash, source: "true", timeout_secs: 30}
)yaml");
  throwing_ = true;
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  const json state = State(run_id);
  EXPECT_EQ(state.value("outcome_code", ""), WorkflowRuntime::kTurnFailedCode);
  EXPECT_EQ(state.value("diagnostic_id", "").rfind("diag_", 0), 0u);
  EXPECT_EQ(EventCount(run_id, "run.failed"), 1);
  auto callback = store_->CallbackOf(run_id);
  ASSERT_TRUE(callback.ok());
  EXPECT_FALSE(callback->has_value()) << "a failed run keeps no callback";
  // Each retry waits out its backoff (1 s doubling, capped at 30 s).
  ASSERT_EQ(thrown_at_.size(), static_cast<size_t>(WorkflowRuntime::kMaxTurnAttempts));
  for (size_t i = 1; i < thrown_at_.size(); ++i) {
    const int64_t gap = thrown_at_[i] - thrown_at_[i - 1];
    EXPECT_GE(gap, BackoffMs(static_cast<int>(i))) << "attempt " << i;
    EXPECT_LE(gap, 31'000) << "attempt " << i;
  }
}

TEST_F(MalformedReplyTest, ARunBackingOffTakesNoClaimFromADueRun) {
  throwing_ = true;
  const std::string backing_off = Start();
  // Until its first exchange throws: it backs off for 1 s.
  for (int tick = 0; tick < 50 && thrown_at_.empty(); ++tick) {
    runtime_->DrainDueForTest();
    if (thrown_at_.empty()) now_ += 100;
  }
  ASSERT_EQ(thrown_at_.size(), 1u);
  throwing_ = false;
  const std::string healthy = Start();
  // One claim slot (a replica with one free worker): the run that is due
  // gets it, though the one backing off has been due for longer.
  auto claimed = store_->ClaimDueCallbacks("another-replica", now_, 15'000, 1);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ((*claimed)[0].run_id, healthy);
  ASSERT_TRUE(store_->ReleaseRunLease(healthy, "another-replica").ok());
  // After its backoff, the first run is claimed again.
  now_ += BackoffMs(1);
  auto later = store_->ClaimDueCallbacks("another-replica", now_, 15'000, 2);
  ASSERT_TRUE(later.ok()) << later.status();
  bool retried = false;
  for (const Callback& callback : *later) retried = retried || callback.run_id == backing_off;
  EXPECT_TRUE(retried);
}

}  // namespace
}  // namespace aevatar::orchestrator
