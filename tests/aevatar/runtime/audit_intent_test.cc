// The frozen terminal audit intent: the typed tool-owned payload it carries,
// and the stop that stays gated while the audit log holds a conflicting
// record or the intent disagrees with its payload.
#include "aevatar/runtime/tool_audit_payload.h"
#include "runtime_fixture.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class AuditIntentTest : public testing::RuntimeFixture {
 protected:
  // Every event type of the run, in order.
  std::vector<std::string> EventTypes(const std::string& run_id) {
    std::vector<std::string> types;
    auto events = store_->EventsAfter(run_id, 0);
    if (events.ok()) {
      for (const RunEvent& e : *events) types.push_back(e.type);
    }
    return types;
  }
};

TEST_F(AuditIntentTest, ACompletedStepFreezesTheReceiptAndItsFacts) {
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  const json fact = TerminalFactOf(run_id);
  ASSERT_TRUE(fact.is_object());
  EXPECT_TRUE(ValidateTerminalFact(fact).ok());
  const json& payload = fact["tool_payload"];
  EXPECT_EQ(payload["@type"], kCodeExecutePayloadType);
  EXPECT_EQ(payload["receipt"]["tool"], "code_execute");
  EXPECT_EQ(payload["receipt"]["subject"], "user-1");
  EXPECT_EQ(payload["receipt"]["call_id"], run_id + "/first");
  EXPECT_EQ(payload["receipt"]["credential_kind"], "ProxyDelegation");
  const json& resource = payload["receipt"]["provider_resource"];
  EXPECT_EQ(resource["operation_id"], fact["provider_operation_id"]);
  EXPECT_EQ(resource["operation_id"].get<std::string>().rfind("op_", 0), 0u);
  EXPECT_EQ(resource["catalog_service_id"], "chrono-sandbox");
  EXPECT_EQ(payload["outcome_kind"], "completed");
  EXPECT_EQ(payload["failure_stage"], "none");
  EXPECT_EQ(payload["mutation"]["may_have_executed"], true);
  EXPECT_EQ(payload["mutation"]["durable_effects"], "isolated_runtime_only");
  EXPECT_EQ(payload["safety"]["sandboxed"], true);
  EXPECT_EQ(payload["terminal"], true);
  EXPECT_EQ(payload["retryable"], false);
  EXPECT_FALSE(payload.contains("failure"));
  // No route identity, credential or key in the frozen fact.
  const std::string text = fact.dump();
  EXPECT_EQ(text.find("us_route_1"), std::string::npos);
  EXPECT_EQ(text.find("credential-secret-xyz"), std::string::npos);
  EXPECT_EQ(text.find("tool:v1:operation:"), std::string::npos);
}

TEST_F(AuditIntentTest, ARunStoppedBeforeSubmitIsRetryableAndNamesTheCancelStage) {
  const std::string run_id = Start();
  runtime_->DrainDueForTest();  // admitted: the operation is pending, nothing was sent
  ASSERT_EQ(executor_.CountOf("submit"), 0);
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  const json payload = TerminalFactOf(run_id)["tool_payload"];
  EXPECT_EQ(payload["outcome_kind"], "cancelled");
  EXPECT_EQ(payload["failure_stage"], "cancel");
  EXPECT_EQ(payload["failure"]["code"], "code_execution_cancelled_before_submit");
  EXPECT_EQ(payload["mutation"]["may_have_executed"], false);
  EXPECT_EQ(payload["retryable"], true);
}

TEST_F(AuditIntentTest, AConflictingRecordInTheSlotLeavesTheStopGated) {
  executor_.polls_before_done = 1000;
  const std::string run_id = Start();
  RunUntil([&] { return executor_.CountOf("status") >= 1; });
  // Someone else's later result already holds the terminal slot of this call.
  AuditRecord other;
  other.kind = "tool.terminal";
  other.run_id = run_id;
  other.workflow_id = definition_.workflow_id;
  other.step_id = "first";
  other.call_id = run_id + "/first";
  other.fact = {{"outcome", "succeeded"}};
  ASSERT_EQ(*audit_->Append(other), AppendOutcome::kAppended);
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  RunUntil([&] { return Phase(run_id) == "finalizing_audit"; });
  ASSERT_EQ(Phase(run_id), "finalizing_audit");
  const size_t exchanges = executor_.exchanges().size();
  RunUntil([] { return false; });  // two minutes of callbacks
  EXPECT_EQ(Phase(run_id), "finalizing_audit") << "the stop settled on a conflicting record";
  EXPECT_TRUE(State(run_id)["pending"].is_object()) << "the operation was dropped";
  EXPECT_TRUE(State(run_id)["stop"].is_object());
  EXPECT_EQ(executor_.exchanges().size(), exchanges) << "finalizing replays the audit only";
  const int retries = EventCount(run_id, "audit.retry");
  EXPECT_GE(retries, 3);
  EXPECT_LE(retries, 10) << "retries back off (1 s doubling, 30 s cap)";
  EXPECT_EQ(TerminalFactOf(run_id), other.fact) << "the stored record wins";
}

TEST_F(AuditIntentTest, AStopWhileTheLastAuditWaitsIsTheRunsEnd) {
  flaky_->FailNext(1000);  // the audit store is down: the last step's intent stays frozen
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "finalizing_audit"; });
  ASSERT_EQ(Phase(run_id), "finalizing_audit");
  ASSERT_EQ(State(run_id)["audit_intent"]["then"], "next_step");
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  flaky_->FailNext(0);  // the store is back
  RunUntil([&] { return Phase(run_id) == "stopped" || Phase(run_id) == "succeeded"; });
  // The step's audit is written, and the stop that came before it still
  // decides how the run ends (its turn audits the stop), as after any other
  // step.
  EXPECT_GE(EventCount(run_id, "audit.written"), 1);
  EXPECT_EQ(Phase(run_id), "stopped") << ::testing::PrintToString(EventTypes(run_id));
}

TEST_F(AuditIntentTest, AnIntentThatDisagreesWithItsPayloadIsNeverAppended) {
  flaky_->FailNext(1000);  // the audit store is down: the intent stays frozen
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "finalizing_audit"; });
  ASSERT_EQ(Phase(run_id), "finalizing_audit");
  // The frozen generic result is changed behind the payload's back.
  auto run = store_->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  run->state["audit_intent"]["record"]["fact"]["outcome"] = "code_execution_cancelled";
  auto callback = store_->CallbackOf(run_id);
  ASSERT_TRUE(callback.ok() && callback->has_value());
  TurnCommit commit{run_id, run->version, run->phase, run->state, {}, **callback, {}, {}, {}};
  ASSERT_TRUE(store_->CommitTurn(commit).ok());
  flaky_->FailNext(0);  // the store is back
  RunUntil([] { return false; });
  EXPECT_EQ(Phase(run_id), "finalizing_audit");
  EXPECT_GE(EventCount(run_id, "audit.invalid"), 1);
  EXPECT_TRUE(TerminalFactOf(run_id).is_null()) << "a disagreeing intent was appended";
}

}  // namespace
}  // namespace aevatar::orchestrator
