// Cancelling a managed Codex run through the whole stack: the run is started
// by aevatar (POST /api/tools/codex_exec -> NyxID -> chrono-sandbox), and the
// cancel goes the way aevatar's own does, POST
// /api/v1/proxy/{slug}/codex/runs/{run_id}/cancel through NyxID's proxy. Only
// the caller that started the run can stop it; a stopped run leaves no
// process behind and aevatar answers the typed managed_execution_cancelled.
// (aevatar sending the cancel itself, on an MCP client's cancel, is
// mcp_server_test's case.)
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "aevatar/codex/managed_cancel.h"
#include "base/crypto.h"
#include "managed_codex_stack.h"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "testing/poll.h"
#include "testing/proc_file.h"

namespace aevatar::testing {
namespace {

using json = nlohmann::json;

// The default users, and bob owns a chrono-sandbox route too.
constexpr char kBobsRoute[] = R"(  - owner: {user: bob}
    catalog_service_id: chrono-sandbox
    label: chrono-sandbox
)";

// Live processes whose parent is `pid`.
bool HasChildren(pid_t pid) {
  for (const auto& [child, parent] : ParentPids()) {
    if (parent == pid) return true;
  }
  return false;
}

class ManagedCodexCancel : public ::testing::Test {
 protected:
  void SetUp() override {
    ManagedCodexOptions options;
    options.backend = "native";  // the run's processes are chrono-sandbox's children
    options.users_yaml = ManagedCodexStack::DefaultUsers() + kBobsRoute;
    stack_ = std::make_unique<ManagedCodexStack>(std::move(options));
    ASSERT_TRUE(stack_->ok());
    alice_ = stack_->Login("alice");
    bob_ = stack_->Login("bob");
    ASSERT_FALSE(alice_.empty());
    ASSERT_FALSE(bob_.empty());
    ASSERT_EQ(stack_->EnsureCredential(alice_).status, 200);
  }

  // POST /api/v1/proxy/chrono-sandbox/codex/runs/{run_id}/cancel at NyxID as
  // `token`, on that caller's own chrono-sandbox route.
  http::ClientResponse CancelThroughNyxid(const std::string& token, const std::string& run_id) {
    NyxidFixture& nyxid = stack_->stack().nyxid();
    const std::string route = nyxid.KeyBySlug(token, "chrono-sandbox").value("id", "");
    EXPECT_FALSE(route.empty());
    return nyxid.Call(
        "POST", "/api/v1/proxy/chrono-sandbox/codex/runs/" + run_id + "/cancel?_nyxid_via=" + route,
        token, "{}");
  }

  std::unique_ptr<ManagedCodexStack> stack_;
  std::string alice_, bob_;
};

TEST_F(ManagedCodexCancel, OnlyTheOwnersCancelStopsTheRunAndNothingIsLeft) {
  const pid_t chrono_pid = stack_->stack().chrono().pid();
  ASSERT_GT(chrono_pid, 0);
  const std::string given_key = "cancel-e2e-" + base::RandomId("k");
  const std::string run_id = orchestrator::ManagedRunId("codex_exec:" + given_key);

  auto pending = std::async(std::launch::async, [&] {
    http::ClientRequest request;
    request.method = "POST";
    request.url = stack_->stack().aevatar().base_url() + "/api/tools/codex_exec";
    // The model call never answers: only a cancel ends the run before its
    // 300 s (or the double's 120 s hang limit).
    request.body = ManagedCodexStack::ManagedArgs("[double:hang] think", 300).dump();
    request.headers.Set("Content-Type", "application/json");
    request.headers.Set("Authorization", "Bearer " + alice_);
    request.headers.Set("Idempotency-Key", given_key);
    request.timeout = std::chrono::seconds(400);
    auto response = http::Fetch(request);
    return response.ok() ? *response : http::ClientResponse{0, {}, "transport failure"};
  });
  // Codex is running once its model call reached the model double.
  ASSERT_TRUE(PollUntil([&] { return !stack_->ModelRecord().empty(); }, std::chrono::minutes(3)))
      << "Codex never called the model";
  ASSERT_TRUE(HasChildren(chrono_pid));

  // bob reaches the same chrono-sandbox through his own route: not his run.
  auto foreign = CancelThroughNyxid(bob_, run_id);
  EXPECT_EQ(foreign.status, 404) << foreign.body;
  EXPECT_EQ(JsonOf(foreign).value("code", ""), "CODEX_RUN_NOT_FOUND");
  EXPECT_EQ(pending.wait_for(std::chrono::seconds(1)), std::future_status::timeout)
      << "bob's cancel stopped alice's run";

  auto cancel = CancelThroughNyxid(alice_, run_id);
  ASSERT_EQ(cancel.status, 202) << cancel.body;
  EXPECT_EQ(JsonOf(cancel).value("status", ""), "cancel_requested");

  const http::ClientResponse answer = pending.get();
  EXPECT_EQ(answer.status, 409) << answer.body;
  const json problem = JsonOf(answer);
  EXPECT_EQ(problem.value("code", ""), "managed_execution_cancelled") << answer.body;
  EXPECT_EQ(problem["result"].value("status", ""), "cancelled") << answer.body;

  // The sandbox is gone: Codex and the sandbox's init.
  EXPECT_TRUE(PollUntil([&] { return !HasChildren(chrono_pid); }));
  EXPECT_EQ(CancelThroughNyxid(alice_, run_id).status, 404) << "an ended run is not cancellable";
}

// A stop of a workflow run whose codex_exec step is running has
// chrono-sandbox kill the step's Codex run (its model call never answers):
// the run ends stopped with the step managed_execution_cancelled, and
// nothing of the run is left.
TEST_F(ManagedCodexCancel, StoppingAWorkflowRunKillsItsRunningCodexStep) {
  const pid_t chrono_pid = stack_->stack().chrono().pid();
  const std::string yaml = R"(workflow_id: codex-stop
steps:
  - id: long_codex
    tool: codex_exec
    timeout_ms: 360000
    arguments:
      target: {kind: managed_sandbox}
      workspace: {kind: empty_git}
      prompt: "[double:hang] think"
      timeout_secs: 300
)";
  AevatarStack& stack = stack_->stack();
  auto started = stack.Aevatar("POST", "/api/workflow-runs", alice_,
                               json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_id = JsonOf(started).value("run_id", "");
  ASSERT_TRUE(PollUntil([&] { return !stack_->ModelRecord().empty(); }, std::chrono::minutes(3)))
      << "the step's Codex never called the model";

  auto stop = stack.Aevatar("POST", "/api/workflow-runs/" + run_id + "/stop", alice_, "{}");
  ASSERT_TRUE(stop.status == 200 || stop.status == 202) << stop.status << " " << stop.body;
  json run;
  ASSERT_TRUE(PollUntil(
      [&] {
        run = JsonOf(stack.Aevatar("GET", "/api/workflow-runs/" + run_id, alice_));
        return run.value("done", false);
      },
      std::chrono::minutes(2)))
      << run.dump();
  EXPECT_EQ(run.value("status", ""), "stopped") << run.dump();
  EXPECT_NE(run.dump().find("managed_execution_cancelled"), std::string::npos) << run.dump();
  EXPECT_TRUE(PollUntil([&] { return !HasChildren(chrono_pid); }));
}

}  // namespace
}  // namespace aevatar::testing
