// POST /mcp through aevatar's real router and ingress auth, in front of the
// NyxID stand-in: the Streamable HTTP rules (sessions, versions, Origin),
// JSON-RPC errors, and tools/call answers that need no executor.
#include <optional>
#include <string>

#include "api_fixture.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class McpApiTest : public AevatarApiTest {
 protected:
  http::Response Post(const std::string& body, const std::string& session = "",
                      const std::string& subject = testing::kUser,
                      const http::Headers& extra = {}) {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/mcp";
    request.body = body;
    request.headers = extra;
    request.headers.Set("Authorization", "Bearer " + HumanToken(subject));
    request.headers.Set("Accept", "application/json");
    if (!session.empty()) request.headers.Set("Mcp-Session-Id", session);
    return router_->Handle(request);
  }
  static std::string Request(int id, const std::string& method, const json& params = json()) {
    json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) message["params"] = params;
    return message.dump();
  }
  std::string Initialize(const std::string& subject = testing::kUser) {
    http::Response answer = Post(Request(1, "initialize",
                                         {{"protocolVersion", "2025-06-18"},
                                          {"capabilities", json::object()},
                                          {"clientInfo", {{"name", "t"}, {"version", "1"}}}}),
                                 "", subject);
    EXPECT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(json::parse(answer.body)["result"]["protocolVersion"], "2025-06-18");
    return answer.headers.Get("Mcp-Session-Id").value_or("");
  }
  static json Body(const http::Response& response) {
    return json::parse(response.body, nullptr, false);
  }
};

TEST_F(McpApiTest, ASessionIsRequiredAndBelongsToItsCaller) {
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(Post(Request(2, "tools/list")).status, 400);
  EXPECT_EQ(Post(Request(2, "tools/list"), "mcps_unknown").status, 404);
  EXPECT_EQ(Post(Request(2, "tools/list"), session, "user-2").status, 404);
  http::Response listed = Post(Request(2, "tools/list"), session);
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(Body(listed)["result"]["tools"].size(), 2u);
  EXPECT_EQ(Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session).status, 202);
  // The session ends with DELETE; it is then unknown.
  http::Request close;
  close.method = "DELETE";
  close.path = close.target = "/mcp";
  close.headers.Set("Authorization", "Bearer " + HumanToken());
  close.headers.Set("Mcp-Session-Id", session);
  EXPECT_EQ(router_->Handle(close).status, 200);
  EXPECT_EQ(Post(Request(3, "ping"), session).status, 404);
}

TEST_F(McpApiTest, NoCredentialIsATypedProblemAndGetIs405) {
  http::Request request;
  request.method = "POST";
  request.path = request.target = "/mcp";
  request.body = Request(1, "ping");
  EXPECT_EQ(router_->Handle(request).status, 401);
  request.method = "GET";
  EXPECT_EQ(router_->Handle(request).status, 405);
}

TEST_F(McpApiTest, MalformedMessagesAreJsonRpcErrorsNotCrashes) {
  const std::string session = Initialize();
  http::Response garbage = Post("{nope", session);
  EXPECT_EQ(garbage.status, 400);
  EXPECT_EQ(Body(garbage)["error"]["code"], -32700);
  EXPECT_EQ(Body(Post("[1,2]", session))["error"]["code"], -32600);
  const json wrong_name = Body(Post(Request(4, "tools/call", {{"name", 12}}), session));
  EXPECT_EQ(wrong_name["error"]["code"], -32602);
  EXPECT_EQ(wrong_name["id"], 4);
  const json wrong_arguments = Body(
      Post(Request(5, "tools/call", {{"name", "code_execute"}, {"arguments", {1, 2}}}), session));
  EXPECT_EQ(wrong_arguments["error"]["code"], -32602);
  EXPECT_EQ(Body(Post(Request(6, "tools/call", {{"name", "rm_rf"}}), session))["error"]["code"],
            -32602);
  EXPECT_EQ(Body(Post(Request(7, "resources/list"), session))["error"]["code"], -32601);
}

TEST_F(McpApiTest, ForeignOriginsAndUnknownVersionsAreRefused) {
  const std::string session = Initialize();
  http::Headers foreign;
  foreign.Set("Host", "aevatar.example");
  foreign.Set("Origin", "https://evil.example");
  EXPECT_EQ(Post(Request(2, "ping"), session, testing::kUser, foreign).status, 403);
  http::Headers same;
  same.Set("Host", "aevatar.example");
  same.Set("Origin", "https://aevatar.example");
  EXPECT_EQ(Post(Request(2, "ping"), session, testing::kUser, same).status, 200);
  http::Headers version;
  version.Set("MCP-Protocol-Version", "1999-01-01");
  EXPECT_EQ(Post(Request(2, "ping"), session, testing::kUser, version).status, 400);
}

TEST_F(McpApiTest, ToolFailuresAreTypedResultsWithADiagnosticId) {
  const std::string session = Initialize();
  const json bad = Body(Post(
      Request(8, "tools/call",
              {{"name", "code_execute"}, {"arguments", {{"language", "cobol"}, {"source", "x"}}}}),
      session));
  EXPECT_EQ(bad["result"]["isError"], true);
  EXPECT_EQ(bad["result"]["structuredContent"]["code"], "UNSUPPORTED_LANGUAGE");
  EXPECT_FALSE(bad["result"]["structuredContent"].value("diagnostic_id", "").empty());
  // Managed codex_exec before the credential exists: the typed code the
  // HTTP tool answers for the same call.
  const json arguments = {{"target", {{"kind", "managed_sandbox"}}},
                          {"workspace", {{"kind", "empty_git"}}},
                          {"prompt", "hi"}};
  const json over_mcp = Body(
      Post(Request(9, "tools/call", {{"name", "codex_exec"}, {"arguments", arguments}}), session));
  const json over_http = Body(Call("POST", "/api/tools/codex_exec", arguments.dump()));
  EXPECT_EQ(over_mcp["result"]["isError"], true) << over_mcp.dump();
  ASSERT_TRUE(over_http.contains("code")) << over_http.dump();
  EXPECT_EQ(over_mcp["result"]["structuredContent"]["code"], over_http["code"]);
  EXPECT_EQ(over_mcp["result"]["structuredContent"]["detail"], over_http["detail"]);
}

TEST_F(McpApiTest, PrivateSshAsksForApprovalAndRunsWithTheApprovedId) {
  const std::string session = Initialize();
  const json arguments = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "s"}, {"principal", "p"}}}}},
      {"prompt", "hi"}};
  const json asked = Body(
      Post(Request(10, "tools/call", {{"name", "codex_exec"}, {"arguments", arguments}}), session));
  ASSERT_EQ(asked["result"]["isError"], false) << asked.dump();
  const json pending = asked["result"]["structuredContent"];
  EXPECT_EQ(pending["status"], "approval_required");
  const std::string id = pending["approval_id"];
  EXPECT_EQ(nyxid_.Count(), 0);
  ASSERT_EQ(Call("POST", "/api/approvals/" + id + "/approve").status, 200);
  const json ran = Body(Post(Request(11, "tools/call",
                                     {{"name", "codex_exec"},
                                      {"arguments", arguments},
                                      {"_meta", {{"aevatar/approval_id", id}}}}),
                             session));
  ASSERT_EQ(ran["result"]["isError"], false) << ran.dump();
  EXPECT_EQ(ran["result"]["structuredContent"]["stdout"], "CODEX_EXEC_READY\n");
  EXPECT_EQ(nyxid_.Count("/api/v1/ssh/s/exec"), 1);
}

}  // namespace
}  // namespace aevatar::orchestrator
