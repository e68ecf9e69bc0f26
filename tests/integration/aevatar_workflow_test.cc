// Durable workflow code_execute through the three real binaries: the proxy
// deadline, crashes of aevatar and of the executor, stop cancellation, and
// secrets.
#include <cstdio>
#include <thread>

#include "aevatar_stack.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kWorkflowUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";

std::string SleepWorkflow(const std::string& id, int seconds, const std::string& extra = "") {
  return "workflow_id: " + id +
         "\nsteps:\n  - id: sleeper\n    tool: code_execute\n    arguments:\n"
         "      language: bash\n      timeout_secs: 60\n      source: |\n" +
         (extra.empty() ? "" : "        " + extra + "\n") + "        sleep " +
         std::to_string(seconds) + "\n        echo DURABLE_OK\n";
}

// The first column of the first row `sql` selects from the SQLite file `db`
// (through the sqlite3 shell), without the trailing newline.
std::string SqliteQuery(const std::string& db, const std::string& sql) {
  std::string out;
  FILE* pipe = ::popen(("sqlite3 " + db + " \"" + sql + "\"").c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  ::pclose(pipe);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class AevatarWorkflow : public ::testing::Test {
 protected:
  void StartStack(std::vector<std::string> nyxid_args = {}) {
    stack_ = std::make_unique<AevatarStack>(kWorkflowUsers, std::move(nyxid_args),
                                            std::vector<std::string>{"--stop-window-ms", "8000"});
    ASSERT_TRUE(stack_->ok());
    token_ = stack_->Login("alice");
    ASSERT_FALSE(token_.empty());
  }
  std::string StartRun(const std::string& yaml) {
    auto r = stack_->Aevatar("POST", "/api/workflow-runs", token_,
                             json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
    EXPECT_EQ(r.status, 202) << r.body;
    return JsonOf(r).value("run_id", "");
  }
  json Run(const std::string& run_id) {
    return JsonOf(stack_->Aevatar("GET", "/api/workflow-runs/" + run_id, token_));
  }
  json Events(const std::string& run_id) {
    return JsonOf(stack_->Aevatar("GET", "/api/workflow-runs/" + run_id + "/events", token_))
        .value("events", json::array());
  }
  // Polls until `predicate(run)` or `seconds` pass; returns the last run view.
  json WaitFor(const std::string& run_id, const std::function<bool(const json&)>& predicate,
               int seconds = 60) {
    json run;
    for (int i = 0; i < seconds * 10; ++i) {
      run = Run(run_id);
      if (predicate(run)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return run;
  }
  static bool Done(const json& run) { return run.value("done", false); }
  static bool StepIs(const json& run, const std::string& status) {
    return run.contains("steps") && !run["steps"].empty() &&
           run["steps"][0].value("status", "") == status;
  }
  std::string OperationIdOf(const std::string& run_id) {
    for (const json& event : Events(run_id)) {
      if (event.value("type", "") == "step.submitted") {
        return event["data"].value("operation_id", "");
      }
    }
    return "";
  }

  std::unique_ptr<AevatarStack> stack_;
  std::string token_;
};

TEST_F(AevatarWorkflow, DurablePathCompletesWhereTheSyncPathHitsTheProxyDeadline) {
  StartStack({"--proxy-timeout-secs", "3"});
  auto sync = stack_->Execute(token_, {{"language", "bash"}, {"source", "sleep 6; echo late"}});
  EXPECT_EQ(sync.status, 504) << sync.body;
  const std::string run_id = StartRun(SleepWorkflow("outlives-deadline", 6));
  json run = WaitFor(run_id, Done);
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][0]["output"]["stdout"], "DURABLE_OK\n");
  int64_t longest = 0;
  int exchanges = 0;
  for (const json& event : Events(run_id)) {
    if (event.value("type", "") != "exchange") continue;
    ++exchanges;
    longest = std::max<int64_t>(longest, event["data"].value("ms", int64_t{0}));
  }
  EXPECT_GE(exchanges, 3);
  EXPECT_LT(longest, 3000) << "an exchange came close to the proxy deadline";
}

TEST_F(AevatarWorkflow, KillNineOfAevatarResumesTheRunWhichCompletesOnce) {
  StartStack();
  const std::string run_id = StartRun(SleepWorkflow("survives-aevatar-crash", 4));
  WaitFor(run_id, [](const json& r) { return StepIs(r, "submitted") || StepIs(r, "running"); });
  const std::string operation_id = OperationIdOf(run_id);
  ASSERT_FALSE(operation_id.empty());
  stack_->RestartAevatar(/*hard=*/true);
  ASSERT_TRUE(stack_->aevatar().ok());
  json run = WaitFor(run_id, Done);
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  int submitted = 0, completed = 0;
  for (const json& event : Events(run_id)) {
    submitted += event.value("type", "") == "step.submitted";
    completed += event.value("type", "") == "step.completed";
  }
  EXPECT_EQ(submitted, 1);
  EXPECT_EQ(completed, 1);
  // One operation at the executor: it finished exactly once.
  const std::string chrono_log = stack_->chrono().ReadLog();
  size_t finished = 0;
  for (size_t at = chrono_log.find("\"operation.finished\""); at != std::string::npos;
       at = chrono_log.find("\"operation.finished\"", at + 1)) {
    ++finished;
  }
  EXPECT_EQ(finished, 1u);
  EXPECT_NE(chrono_log.find(operation_id), std::string::npos);
  auto audit = stack_->Aevatar("GET", "/api/audit?run_id=" + run_id, token_);
  ASSERT_EQ(audit.status, 200);
  EXPECT_EQ(JsonOf(audit)["records"].size(), 2u);  // running + terminal, each once
}

TEST_F(AevatarWorkflow, KillNineOfTheExecutorEndsTheStepOutcomeUncertain) {
  StartStack();
  const std::string run_id = StartRun(SleepWorkflow("executor-crash", 20));
  ASSERT_TRUE(
      StepIs(WaitFor(run_id, [](const json& r) { return StepIs(r, "running"); }), "running"))
      << "the step never ran, so the crash would not be mid-run";
  stack_->RestartChrono(/*hard=*/true);
  ASSERT_TRUE(stack_->chrono().ok());
  json run = WaitFor(run_id, Done);
  EXPECT_EQ(run.value("status", ""), "failed") << run.dump();
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_outcome_uncertain");
}

TEST_F(AevatarWorkflow, StopCancelsWithOneFrozenDeadline) {
  StartStack();
  const std::string run_id = StartRun(SleepWorkflow("stoppable", 30));
  ASSERT_TRUE(
      StepIs(WaitFor(run_id, [](const json& r) { return StepIs(r, "running"); }), "running"))
      << "the step never ran, so the stop would not cancel a live operation";
  auto first = stack_->Aevatar("POST", "/api/workflow-runs/" + run_id + "/stop", token_, "{}");
  ASSERT_EQ(first.status, 202) << first.body;
  const int64_t deadline = JsonOf(first).value("stop_deadline_unix_ms", int64_t{0});
  auto again = stack_->Aevatar("POST", "/api/workflow-runs/" + run_id + "/stop", token_, "{}");
  EXPECT_EQ(JsonOf(again).value("stop_deadline_unix_ms", int64_t{0}), deadline);
  json run = WaitFor(run_id, Done, 20);
  EXPECT_EQ(run.value("status", ""), "stopped") << run.dump();
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_cancelled");
  int cancels = 0;
  for (const json& event : Events(run_id)) {
    if (event.value("type", "") != "cancel.sent") continue;
    ++cancels;
    EXPECT_EQ(event["data"].value("deadline_unix_ms", int64_t{0}), deadline);
  }
  EXPECT_GE(cancels, 1);
  auto audit = JsonOf(stack_->Aevatar("GET", "/api/audit?run_id=" + run_id, token_));
  ASSERT_EQ(audit["records"].size(), 2u);
  EXPECT_EQ(audit["records"][1]["kind"], "tool.terminal");
  EXPECT_EQ(audit["records"][1]["fact"].value("outcome", ""), "code_execution_cancelled");
}

TEST_F(AevatarWorkflow, PlanFromBeforeV6RunsOnlyForASourceReadableCaller) {
  StartStack();
  auto saved = stack_->Aevatar("POST", "/api/workflows", token_,
                               json{{"workflow_yaml", SleepWorkflow("current-plan", 0)}}.dump());
  ASSERT_EQ(saved.status, 201) << saved.body;
  // The caller sees which route kind was admitted, never the route's identity.
  const json receipt = JsonOf(saved);
  EXPECT_EQ(receipt.value("workflow_id", ""), "current-plan");
  EXPECT_FALSE(receipt.value("digest", "").empty());
  EXPECT_EQ(receipt["admission"], (json{{"version", "external-capability-admission.v6"},
                                        {"capability", "code_execute"},
                                        {"slug", "chrono-sandbox"},
                                        {"catalog_service_id", "chrono-sandbox"}}))
      << saved.body;
  // The stored v6 proof seals the exact route alice's code_execute resolves to.
  const std::string db = stack_->dir() + "/aevatar/workflows.db";
  const json proof = json::parse(
      SqliteQuery(db, "SELECT admission_proof FROM workflows WHERE workflow_id = 'current-plan'"),
      nullptr, false);
  ASSERT_TRUE(proof.is_object()) << "no stored proof";
  EXPECT_EQ(proof.value("version", ""), "external-capability-admission.v6");
  EXPECT_EQ(proof.value("capability", ""), "code_execute");
  const std::string route_id = stack_->nyxid().KeyBySlug(token_, "chrono-sandbox").value("id", "");
  ASSERT_FALSE(route_id.empty());
  EXPECT_EQ(proof.value("user_service_id", ""), route_id);
  EXPECT_EQ(proof.value("contract_digest", "").rfind("sha256:", 0), 0u) << proof.dump();
  EXPECT_GT(proof.value("admitted_at_ms", int64_t{0}), 0);
  // A plan saved by an older release: the same definition, no admission proof.
  const std::string sql =
      "INSERT INTO workflows SELECT owner, 'legacy-plan', definition, digest, 'null', saved_at_ms "
      "FROM workflows WHERE workflow_id = 'current-plan';";
  ASSERT_EQ(std::system(("sqlite3 " + db + " \"" + sql + "\"").c_str()), 0);
  auto human = stack_->Aevatar("POST", "/api/workflow-runs", token_,
                               json{{"workflow_id", "legacy-plan"}}.dump());
  ASSERT_EQ(human.status, 202) << human.body;
  EXPECT_EQ(WaitFor(JsonOf(human).value("run_id", ""), Done).value("status", ""), "succeeded");
  const std::string key = stack_->nyxid().CreateAgentKey(token_, "legacy").value("key", "");
  ASSERT_FALSE(key.empty());
  auto agent = stack_->Aevatar("POST", "/api/workflow-runs", key,
                               json{{"workflow_id", "legacy-plan"}}.dump());
  ExpectProblem(agent, 409, "ADMISSION_PROOF_REQUIRED");
  // The bound plan runs for the Agent Key on its sealed route.
  auto bound = stack_->Aevatar("POST", "/api/workflow-runs", key,
                               json{{"workflow_id", "current-plan"}}.dump());
  ASSERT_EQ(bound.status, 202) << bound.body;
  EXPECT_EQ(WaitFor(JsonOf(bound).value("run_id", ""), Done).value("status", ""), "succeeded");
}

TEST_F(AevatarWorkflow, PlantedSecretsStayInTheRunsOwnOutputOnly) {
  StartStack();
  const std::string marker = "SRC_MARKER_" + base::HexEncode(base::RandomBytes(6));
  const std::string run_id =
      StartRun(SleepWorkflow("secrets", 1, "# " + marker + " (a comment in the source)"));
  json run = WaitFor(run_id, Done);
  ASSERT_EQ(run.value("status", ""), "succeeded");
  ASSERT_TRUE(stack_->aevatar().WaitForSentinel("/api/tools"));  // absent, not late
  std::string surfaces = run.dump() + Events(run_id).dump() +
                         stack_->Aevatar("GET", "/api/audit?run_id=" + run_id, token_).body +
                         stack_->aevatar().ReadLog();
  for (const std::string& secret : {marker, token_, std::string("tool:v1:operation:")}) {
    EXPECT_EQ(surfaces.find(secret), std::string::npos) << "leaked: " << secret.substr(0, 12);
  }
}

}  // namespace
}  // namespace aevatar::testing
