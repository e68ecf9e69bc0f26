#include <memory>
#include <string>

#include "aevatar/approvals/private_ssh_gate.h"
#include "aevatar/codex/managed_codex.h"
#include "api_fixture.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/jws.h"
#include "codex/fake_nyxid.h"
#include "gtest/gtest.h"

// aevatar's managed codex_exec routes through its real router and ingress
// auth (a human access token signed by the test's key): every rejected shape
// is a typed 400 before any exchange with NyxID, and the lifecycle and the
// tool call work end to end against the NyxID stand-in.
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;
using testing::FakeNyxid;
using testing::kUser;

class CodexApiTest : public AevatarApiTest {};

TEST_F(CodexApiTest, EveryRejectedShapeIsATyped400WithoutAnyNetworkCall) {
  const json managed = {{"target", {{"kind", "managed_sandbox"}}},
                        {"workspace", {{"kind", "empty_git"}}},
                        {"prompt", "hi"}};
  std::vector<std::string> bodies = {"", "{", "[]", R"({"prompt": "hi"})"};
  for (const char* field : {"service", "model", "image", "path", "provider", "shell", "flags",
                            "credential", "token", "unknown_member"}) {
    json body = managed;
    body[field] = "x";
    bodies.push_back(body.dump());
  }
  json mixed = managed;
  mixed["target"]["private_ssh"] = {{"service", "s"}, {"principal", "p"}};
  bodies.push_back(mixed.dump());
  json wrong_type = managed;
  wrong_type["timeout_secs"] = "180";
  bodies.push_back(wrong_type.dump());
  json out_of_range = managed;
  out_of_range["timeout_secs"] = 601;
  bodies.push_back(out_of_range.dump());
  json no_workspace = managed;
  no_workspace.erase("workspace");
  bodies.push_back(no_workspace.dump());
  for (const std::string& body : bodies) {
    http::Response response = Call("POST", "/api/tools/codex_exec", body);
    EXPECT_EQ(response.status, 400) << body;
    json problem = json::parse(response.body, nullptr, false);
    EXPECT_TRUE(problem.contains("code")) << response.body;
    EXPECT_FALSE(problem.value("diagnostic_id", "").empty()) << response.body;
  }
  EXPECT_EQ(nyxid_.Count(), 0) << "validation must precede every network call";
}

TEST_F(CodexApiTest, PrivateSshRunsOnlyAfterItsOwnerApprovedTheExactCall) {
  const json body = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "s"}, {"principal", "p"}}}}},
      {"prompt", "hi"}};
  // Minted once: a token minted per call can differ from the one forwarded
  // (its iat is in whole seconds), and the check below compares the two.
  const std::string user_token = HumanToken(testing::kUser);
  auto call = [&](const json& sent, const std::string& approval_id,
                  const std::string& subject = testing::kUser) {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/api/tools/codex_exec";
    request.body = sent.dump();
    request.headers.Set("Authorization",
                        "Bearer " + (subject == testing::kUser ? user_token : HumanToken(subject)));
    if (!approval_id.empty()) request.headers.Set("Approval-Id", approval_id);
    return router_->Handle(request);
  };
  // The first request only asks: a pending approval of the exact call.
  http::Response asked = call(body, "");
  ASSERT_EQ(asked.status, 202) << asked.body;
  const json pending = json::parse(asked.body);
  EXPECT_EQ(pending["status"], "approval_required");
  const std::string id = pending["approval_id"];
  const json shown = json::parse(Call("GET", "/api/approvals/" + id).body);
  EXPECT_EQ(shown["call"]["prompt"], "hi");
  EXPECT_EQ(shown["call"]["timeout_secs"], 300);
  // Still pending: asked again. Another call, or another user: refused.
  EXPECT_EQ(call(body, id).status, 202);
  json other = body;
  other["prompt"] = "something else";
  EXPECT_EQ(json::parse(call(other, id).body)["code"], "APPROVAL_CALL_MISMATCH");
  EXPECT_EQ(json::parse(call(body, id, "user-2").body)["code"], "APPROVAL_NOT_FOUND");
  EXPECT_EQ(json::parse(call(body, "../x").body)["code"], "APPROVAL_ID_INVALID");
  EXPECT_EQ(nyxid_.Count(), 0);
  // Approved: it runs once through NyxID's SSH route with the caller's own
  // credential, and answers the raw SSH response; the approval is then used.
  ASSERT_EQ(Call("POST", "/api/approvals/" + id + "/approve").status, 200);
  http::Response ran = call(body, id);
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(json::parse(ran.body), json({{"exit_code", 0},
                                         {"timed_out", false},
                                         {"stdout", "CODEX_EXEC_READY\n"},
                                         {"stderr", ""}}));
  ASSERT_EQ(nyxid_.Count("/api/v1/ssh/s/exec"), 1);
  const testing::RecordedRequest sent = nyxid_.Requests().back();
  EXPECT_EQ(sent.authorization, user_token);
  EXPECT_EQ(json::parse(sent.body), json({{"principal", "p"},
                                          {"command", "aevatar-codex-exec v1 --timeout-secs 300"},
                                          {"stdin", "hi"}}));
  EXPECT_EQ(json::parse(call(body, id).body)["code"], "APPROVAL_ALREADY_USED");
  EXPECT_EQ(json::parse(Call("GET", "/api/approvals/" + id).body)["state"], "used");
  // Denied: never runs.
  const std::string denied = json::parse(call(body, "").body)["approval_id"];
  ASSERT_EQ(Call("POST", "/api/approvals/" + denied + "/deny").status, 200);
  http::Response refused = call(body, denied);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(json::parse(refused.body)["code"], "APPROVAL_DENIED");
  EXPECT_EQ(nyxid_.Count(), 1);
}

TEST_F(CodexApiTest, PrivateSshRouteFailuresAreTypedAndMalformedRepliesNeverSucceed) {
  const json body = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "s"}, {"principal", "p"}}}}},
      {"prompt", "hi"}};
  auto approved_call = [&] {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/api/tools/codex_exec";
    request.body = body.dump();
    request.headers.Set("Authorization", "Bearer " + HumanToken(testing::kUser));
    const std::string id = json::parse(router_->Handle(request).body)["approval_id"];
    EXPECT_EQ(Call("POST", "/api/approvals/" + id + "/approve").status, 200);
    request.headers.Set("Approval-Id", id);
    return router_->Handle(request);
  };
  const std::pair<http::Response, std::pair<int, std::string>> cases[] = {
      {FakeNyxid::Reply(503, {{"code", "NODE_OFFLINE"}}), {503, "node_offline"}},
      {FakeNyxid::Reply(502, {{"code", "SSH_HOST_KEY_MISMATCH"}}), {502, "ssh_host_key_mismatch"}},
      {FakeNyxid::Reply(404, {{"code", "SSH_SERVICE_NOT_FOUND"}}), {404, "ssh_service_not_found"}},
      {FakeNyxid::Reply(500, {{"code", "SOMETHING_ELSE"}}), {502, "ssh_route_unavailable"}},
      // 200 but not the four fields: never a success.
      {FakeNyxid::Reply(200, {{"exit_code", "0"}, {"stdout", "CODEX_EXEC_READY"}}),
       {502, "ssh_route_unavailable"}},
      {http::Response{200, {}, "not json", nullptr, nullptr}, {502, "ssh_route_unavailable"}},
  };
  for (const auto& [reply, expected] : cases) {
    nyxid_.OnSshExec([reply = reply](const http::Request&) { return reply; });
    http::Response response = approved_call();
    EXPECT_EQ(response.status, expected.first) << response.body;
    const json problem = json::parse(response.body, nullptr, false);
    EXPECT_EQ(problem.value("code", ""), expected.second) << response.body;
    EXPECT_FALSE(problem.value("diagnostic_id", "").empty()) << response.body;
  }
}

TEST_F(CodexApiTest, PendingPrivateSshApprovalsAreBoundedPerOwner) {
  const json body = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "s"}, {"principal", "p"}}}}},
      {"prompt", "hi"}};
  for (int64_t i = 0; i < kMaxPendingApprovals; ++i) {
    ASSERT_EQ(Call("POST", "/api/tools/codex_exec", body.dump()).status, 202) << i;
  }
  http::Response over = Call("POST", "/api/tools/codex_exec", body.dump());
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(json::parse(over.body)["code"], "APPROVALS_PENDING_LIMIT");
  // Another owner is not affected.
  EXPECT_EQ(Call("POST", "/api/tools/codex_exec", body.dump(), "user-2").status, 202);
}

TEST_F(CodexApiTest, LifecycleThenExecutionThroughTheRouter) {
  json status = json::parse(Call("GET", "/api/managed-codex/credential").body);
  EXPECT_EQ(status["execution_ready"], false);
  EXPECT_EQ(status["execution_readiness_reason"], "managed_credential_missing");
  http::Response ensured = Call("POST", "/api/managed-codex/credential");
  ASSERT_EQ(ensured.status, 200) << ensured.body;
  EXPECT_EQ(json::parse(ensured.body)["action"], "created");
  EXPECT_EQ(ensured.body.find(nyxid_.MintedKeys().at(0)), std::string::npos);
  status = json::parse(Call("GET", "/api/managed-codex/credential").body);
  EXPECT_EQ(status["status"], "active");
  EXPECT_EQ(status["execution_ready"], true);
  EXPECT_EQ(status["execution_readiness_reason"], "ready");
  json readiness = json::parse(Call("GET", "/api/capabilities/codex_exec/readiness").body);
  EXPECT_EQ(readiness["ready"], true);
  EXPECT_EQ(readiness["capability_class"], "RolloutRestrictedPlatform");
  EXPECT_EQ(readiness["rollout_boundary"], "InternalOnly");
  const json body = {{"target", {{"kind", "managed_sandbox"}}},
                     {"workspace", {{"kind", "empty_git"}}},
                     {"prompt", "Reply with exactly CODEX_EXEC_READY"}};
  http::Response ran = Call("POST", "/api/tools/codex_exec", body.dump());
  ASSERT_EQ(ran.status, 200) << ran.body;
  json result = json::parse(ran.body);
  EXPECT_EQ(result["status"], "succeeded");
  EXPECT_EQ(result["target"], "managed_sandbox");
  EXPECT_EQ(result["exit_code"], 0);
  EXPECT_FALSE(result["diagnostic_id"].get<std::string>().empty());
  // A non-zero exit is the typed error, keeping the runner's fields.
  nyxid_.OnCodexExecute([](const http::Request&) {
    return FakeNyxid::Reply(200, {{"status", "failed"},
                                  {"target", "managed_sandbox"},
                                  {"output", ""},
                                  {"exit_code", 1},
                                  {"diagnostic_id", "diag_runner9"}});
  });
  http::Response failed = Call("POST", "/api/tools/codex_exec", body.dump());
  EXPECT_EQ(failed.status, 422);
  json problem = json::parse(failed.body);
  EXPECT_EQ(problem["code"], kManagedExecutionNonzeroExit);
  EXPECT_EQ(problem["result"]["diagnostic_id"], "diag_runner9");
  EXPECT_FALSE(problem["diagnostic_id"].get<std::string>().empty());
}

// An Agent Key restricted to some services is an execution credential:
// managed codex_exec runs for it only when it names the user's chrono-sandbox
// route (aevatar checks, NyxID sees only the managed key), and it reads
// nothing. An unrestricted key is the user, as before.
TEST_F(CodexApiTest, ARestrictedKeyRunsManagedCodexOnlyOnTheChronoRouteAndReadsNothing) {
  ASSERT_EQ(Call("POST", "/api/managed-codex/credential").status, 200);
  const auto mint = [&](const std::vector<std::string>& allowed) {
    const NyxidReply reply = client_->CreateAgentKey(testing::kHumanToken, "agent", allowed);
    return base::StringOr(reply.body, "key", "");
  };
  const std::string elsewhere = mint({"some-other-service"});
  const std::string for_chrono = mint({"chrono-sandbox"});
  const std::string unrestricted = mint({});
  ASSERT_FALSE(elsewhere.empty() || for_chrono.empty() || unrestricted.empty());
  const auto as = [&](const std::string& key, const std::string& method, const std::string& path,
                      const std::string& body = "") {
    http::Request request;
    request.method = method;
    request.path = request.target = path;
    request.body = body;
    request.headers.Set("Authorization", "Bearer " + key);
    return router_->Handle(request);
  };
  const std::string managed = json{
      {"target", {{"kind", "managed_sandbox"}}},
      {"workspace", {{"kind", "empty_git"}}},
      {"prompt", "hi"}}.dump();
  http::Response refused = as(elsewhere, "POST", "/api/tools/codex_exec", managed);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(json::parse(refused.body)["code"], "AGENT_KEY_SERVICE_NOT_ALLOWED");
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0);
  http::Response ran = as(for_chrono, "POST", "/api/tools/codex_exec", managed);
  EXPECT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(as(unrestricted, "POST", "/api/tools/codex_exec", managed).status, 200);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 2);
  for (const char* path : {"/api/managed-codex/credential",
                           "/api/capabilities/codex_exec/readiness", "/api/approvals"}) {
    for (const std::string& key : {elsewhere, for_chrono}) {
      http::Response read = as(key, "GET", path);
      EXPECT_EQ(read.status, 403) << path << ": " << read.body;
      EXPECT_EQ(json::parse(read.body)["code"], "AGENT_KEY_RESTRICTED") << path;
    }
    EXPECT_EQ(as(unrestricted, "GET", path).status, 200) << path;
  }
  // The tool schemas are what an execution credential needs to call them.
  for (const std::string& key : {elsewhere, for_chrono}) {
    EXPECT_EQ(as(key, "GET", "/api/tools").status, 200);
  }
}

TEST_F(CodexApiTest, ToolCatalogCarriesTheSpecSchemaAndFailClosedApproval) {
  json tools = json::parse(Call("GET", "/api/tools").body)["tools"];
  json codex;
  for (const json& tool : tools) {
    if (tool["name"] == "codex_exec") codex = tool;
  }
  ASSERT_TRUE(codex.is_object());
  EXPECT_EQ(codex["capability_class"], "RolloutRestrictedPlatform");
  EXPECT_EQ(codex["approval"], "required");
  EXPECT_EQ(codex["input_schema"]["additionalProperties"], false);
  EXPECT_EQ(codex["input_schema"]["required"], json::array({"target", "prompt"}));
  EXPECT_NE(codex["description"].get<std::string>().find("managed_sandbox"), std::string::npos);
  EXPECT_NE(codex["description"].get<std::string>().find("code_execute"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::orchestrator
