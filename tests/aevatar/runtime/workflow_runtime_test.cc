// The workflow runtime driven turn by turn under a controlled clock, against a
// test double of the executor (fake_executor.h) and the real SQLite stores.
#include "aevatar/runtime/workflow_runtime.h"

#include <fstream>
#include <map>

#include "runtime_fixture.h"

namespace aevatar::orchestrator {
namespace {

class WorkflowRuntimeTest : public testing::RuntimeFixture {};

TEST_F(WorkflowRuntimeTest, RunCompletesThroughSubmitPollAndResultOnce) {
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  EXPECT_EQ(executor_.CountOf("submit"), 1);
  EXPECT_EQ(executor_.CountOf("result"), 1);
  // Every status read after the receipt carries the last ETag.
  for (const testing::Exchange& e : executor_.exchanges()) {
    if (e.kind == "status") {
      EXPECT_FALSE(e.if_none_match.empty());
    }
  }
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].kind, "tool.running");
  EXPECT_EQ((*records)[1].kind, "tool.terminal");
  EXPECT_EQ((*records)[1].fact.value("outcome", ""), "succeeded");
  auto run = store_->GetRun(run_id);
  EXPECT_EQ(run->state["steps"][0]["output"]["stdout"], "done\n");
}

TEST_F(WorkflowRuntimeTest, AStepWithoutTimeoutSecsSubmitsTheSpecsDefault) {
  UseWorkflow(R"yaml(
workflow_id: default-timeout
steps:
  - id: only
    tool: code_execute
    arguments: {language: bash, source: "echo hi"}
)yaml");
  Start();
  RunUntil([&] { return executor_.CountOf("submit") == 1; });
  ASSERT_EQ(executor_.CountOf("submit"), 1);
  // sandbox-execution.md: the request always carries timeout_secs, 180 by default.
  const testing::Exchange submit = executor_.exchanges().front();
  ASSERT_EQ(submit.kind, "submit");
  EXPECT_EQ(submit.body.value("timeout_secs", 0), 180);
}

TEST_F(WorkflowRuntimeTest, AFreshRuntimeResumesFromPersistedState) {
  const std::string run_id = Start();
  RunUntil([&] { return executor_.CountOf("submit") == 1; });  // admitted and submitted
  ASSERT_EQ(executor_.CountOf("submit"), 1);
  runtime_ = MakeRuntime();  // as after a crash: nothing in memory survives
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  EXPECT_EQ(Phase(run_id), "succeeded");
  EXPECT_EQ(executor_.CountOf("submit"), 1);
  EXPECT_EQ(audit_->ForRun(run_id)->size(), 2u);  // one running, one terminal
}

TEST_F(WorkflowRuntimeTest, StopFreezesOneDeadlineAndCancelCarriesIt) {
  executor_.polls_before_done = 1000;
  const std::string run_id = Start();
  RunUntil([&] { return executor_.CountOf("status") >= 2; });
  auto first = runtime_->RequestStop(run_id, "user-1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, now_.load() + 10'000);
  now_ += 500;
  auto again = runtime_->RequestStop(run_id, "user-1");  // redelivery reuses it
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  EXPECT_TRUE(absl::IsNotFound(runtime_->RequestStop(run_id, "someone-else").status()));
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  ASSERT_EQ(Phase(run_id), "stopped");
  ASSERT_GE(executor_.CountOf("cancel"), 1);
  for (const testing::Exchange& e : executor_.exchanges()) {
    if (e.kind == "cancel") {
      EXPECT_EQ(e.deadline_unix_ms, *first);
    }
  }
  auto records = audit_->ForRun(run_id);
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ(records->back().kind, "tool.terminal");
  EXPECT_EQ(records->back().fact.value("outcome", ""), "code_execution_cancelled");
}

// Sealed material lives only as long as something reads it: a step's (its
// idempotency key and request, the source included) until its operation
// ends, a run's credential and definition until the run ends. A stopped run
// deletes them as a finished one does.
TEST_F(WorkflowRuntimeTest, SealedMaterialIsDeletedWithTheCommitThatEndsItsUse) {
  executor_.polls_before_done = 1000;
  const std::string finished = Start("MARKER_FINISHED");
  const std::string stopped = Start("MARKER_STOPPED");
  runtime_->DrainDueForTest();  // both admitted: their material is sealed
  std::map<std::string, std::vector<std::string>> refs;
  for (const std::string& run_id : {finished, stopped}) {
    const nlohmann::json state = State(run_id);
    refs[run_id] = {state["pending"].value("material_ref", ""),
                    state["caller"].value("credential_ref", ""), state.value("definition_ref", "")};
  }
  // How many of the run's three refs still open.
  auto still_sealed = [&](const std::string& run_id) {
    int open = 0;
    for (const std::string& ref : refs[run_id]) open += store_->GetSealed(ref).ok();
    return open;
  };
  ASSERT_EQ(still_sealed(finished), 3);
  ASSERT_EQ(still_sealed(stopped), 3);
  RunUntil([&] { return executor_.CountOf("status") >= 2; });
  ASSERT_TRUE(runtime_->RequestStop(stopped, "user-1").ok());
  executor_.polls_before_done = 0;
  RunUntil([&] { return Phase(finished) == "succeeded" && Phase(stopped) == "stopped"; });
  ASSERT_EQ(Phase(finished), "succeeded");
  ASSERT_EQ(Phase(stopped), "stopped");
  EXPECT_EQ(still_sealed(finished), 0);
  EXPECT_EQ(still_sealed(stopped), 0);
}

// A run's lock is kept only while a turn or a message holds a reference to
// it: a replica that served many runs keeps an entry for none of them.
TEST_F(WorkflowRuntimeTest, NoRunsLockOutlivesItsTurnsAndMessages) {
  executor_.polls_before_done = 1000;
  const std::string stopped = Start("MARKER_STOPPED");
  const std::string finished = Start("MARKER_FINISHED");
  RunUntil([&] { return executor_.CountOf("status") >= 2; });
  ASSERT_TRUE(runtime_->RequestStop(stopped, "user-1").ok());
  executor_.polls_before_done = 0;
  RunUntil([&] { return Phase(stopped) == "stopped" && Phase(finished) == "succeeded"; });
  ASSERT_EQ(Phase(stopped), "stopped");
  ASSERT_EQ(Phase(finished), "succeeded");
  // A message to a run that is done takes its lock too, whatever it answers.
  (void)runtime_->RequestStop(finished, "user-1");
  EXPECT_EQ(runtime_->RunLocksForTest(), 0u);
}

TEST_F(WorkflowRuntimeTest, PastTheStopDeadlineTheUncertainOutcomeIsFrozen) {
  UseWorkflow(testing::kTwoStepWorkflow);  // a second step the runtime must not start
  executor_.polls_before_done = 1000;
  executor_.ignore_cancel = true;  // no cancel lands: the run is still live at the deadline
  const std::string run_id = Start();
  RunUntil([&] { return executor_.CountOf("status") >= 1; });
  auto deadline = runtime_->RequestStop(run_id, "user-1");
  ASSERT_TRUE(deadline.ok());
  // The audit store is down from before the deadline (5 failed appends, about
  // 31 s of backoff), so the run keeps taking turns well past it.
  flaky_->FailNext(5);
  RunUntil([&] { return now_.load() >= *deadline + 20'000; });
  ASSERT_EQ(Phase(run_id), "finalizing_audit");
  EXPECT_GE(executor_.CountOf("cancel"), 1);  // cancels went out before the deadline
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  EXPECT_EQ(Phase(run_id), "stopped");
  // The runtime was busy with this run after the deadline (its audit retries)...
  auto events = store_->EventsAfter(run_id, 0);
  ASSERT_TRUE(events.ok());
  const std::vector<RunEvent> list = *events;
  int retries_after_deadline = 0;
  for (const RunEvent& e : list) {
    retries_after_deadline += e.type == "audit.retry" && e.at_ms >= *deadline;
    // ...yet admitted no step at or after the deadline...
    if (e.type == "step.admitted") {
      EXPECT_LT(e.at_ms, *deadline) << e.data.dump();
    }
  }
  EXPECT_EQ(retries_after_deadline, 5);
  EXPECT_EQ(EventCount(run_id, "step.admitted"), 1);
  // ...and started no provider exchange at or after it.
  for (const testing::Exchange& e : executor_.exchanges()) {
    EXPECT_LT(e.at_ms, *deadline) << e.kind << " at " << e.at_ms;
  }
  EXPECT_EQ(executor_.CountOf("submit"), 1);
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ(records->back().fact.value("outcome", ""), "code_execution_cancel_outcome_uncertain");
}

TEST_F(WorkflowRuntimeTest, AuditOutageIsReplayedIntoExactlyOneRecord) {
  const std::string run_id = Start();
  RunUntil([&] { return executor_.CountOf("result") == 0 && executor_.CountOf("status") >= 1; });
  flaky_->FailNext(3);
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  int terminal = 0;
  for (const AuditRecord& record : *records) terminal += record.kind == "tool.terminal";
  EXPECT_EQ(terminal, 1);
  EXPECT_EQ(records->size(), 2u);
  auto events = store_->EventsAfter(run_id, 0);
  ASSERT_TRUE(events.ok());
  const std::vector<RunEvent> list = *events;
  int retries = 0;
  for (const RunEvent& e : list) retries += e.type == "audit.retry";
  EXPECT_EQ(retries, 3);
}

TEST_F(WorkflowRuntimeTest, RunningAuditMissedAtSubmitIsWrittenBeforeTheTerminalOne) {
  flaky_->FailNext(1);  // the running audit at the receipt fails
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded");
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].kind, "tool.running");
  EXPECT_EQ((*records)[1].kind, "tool.terminal");
}

TEST_F(WorkflowRuntimeTest, SecretsNeverReachStateOrEvents) {
  const std::string marker = "PLANTED_SOURCE_" + base::HexEncode(base::RandomBytes(6));
  const std::string run_id = Start(marker);
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  auto run = store_->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  std::string persisted = run->state.dump();
  auto events = store_->EventsAfter(run_id, 0);
  ASSERT_TRUE(events.ok());
  const std::vector<RunEvent> list = *events;
  for (const RunEvent& e : list) persisted += e.data.dump();
  std::string key;
  for (const testing::Exchange& e : executor_.exchanges()) {
    if (e.kind == "submit") key = e.key;
  }
  ASSERT_EQ(key.rfind("tool:v1:operation:", 0), 0u);
  EXPECT_EQ(persisted.find(key), std::string::npos) << "idempotency key in state";
  EXPECT_EQ(persisted.find("credential-secret-xyz"), std::string::npos) << "credential in state";
  EXPECT_EQ(persisted.find("echo " + marker), std::string::npos) << "source in state";
  // The database file holds them only sealed.
  std::ifstream in(dir_ + "/workflows.db", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ifstream wal(dir_ + "/workflows.db-wal", std::ios::binary);
  bytes += std::string((std::istreambuf_iterator<char>(wal)), {});
  EXPECT_EQ(bytes.find("credential-secret-xyz"), std::string::npos);
  EXPECT_EQ(bytes.find(key), std::string::npos);
}

TEST_F(WorkflowRuntimeTest, TheRuntimeEnforcesAStepsTimeoutMs) {
  UseWorkflow(R"yaml(
workflow_id: step-timeout
steps:
  - id: slow
    tool: code_execute
    timeout_ms: 35000
    arguments: {language: bash, source: "sleep 1000", timeout_secs: 30}
)yaml");
  executor_.polls_before_done = 1000;  // the operation never finishes by itself
  const std::string run_id = Start();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  const nlohmann::json step = State(run_id)["steps"][0];
  EXPECT_EQ(step.value("outcome_code", ""), "code_execution_step_timeout");
  EXPECT_FALSE(step.value("diagnostic_id", "").empty());
  // It ended at its deadline (callbacks are shortened to it), not a tick later.
  EXPECT_EQ(step.value("finished_at_ms", int64_t{0}) - step.value("started_at_ms", int64_t{0}),
            35'000);
  EXPECT_EQ(executor_.CountOf("cancel"), 1);
  const int64_t cancel_deadline = executor_.exchanges().back().deadline_unix_ms;
  EXPECT_GT(cancel_deadline, step.value("finished_at_ms", int64_t{0}));
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->back().fact.value("outcome", ""), "code_execution_step_timeout");
}

}  // namespace
}  // namespace aevatar::orchestrator
