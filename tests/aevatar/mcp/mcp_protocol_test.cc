#include "aevatar/mcp/mcp_protocol.h"

#include <gtest/gtest.h>

#include "aevatar/admission/tool_catalog.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

RpcFailure FailureOf(std::string_view body) {
  RpcFailure failure;
  EXPECT_FALSE(ParseRpcMessage(body, &failure).ok()) << body;
  return failure;
}

TEST(McpProtocol, ClassifiesRequestsNotificationsAndResponses) {
  RpcFailure failure;
  auto request = ParseRpcMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})", &failure);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->kind, RpcMessage::Kind::kRequest);
  EXPECT_EQ(request->id, 7);
  auto note = ParseRpcMessage(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}})",
      &failure);
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(note->kind, RpcMessage::Kind::kNotification);
  EXPECT_EQ(CancelledRequestKey(note->params), RequestKey("a"));
  auto response = ParseRpcMessage(R"({"jsonrpc":"2.0","id":"x","result":{}})", &failure);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->kind, RpcMessage::Kind::kResponse);
}

TEST(McpProtocol, MalformedMessagesAreTypedJsonRpcErrors) {
  EXPECT_EQ(FailureOf("{not json").code, kRpcParseError);
  EXPECT_EQ(FailureOf(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])").code, kRpcInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"1.0","id":1,"method":"ping"})").code, kRpcInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})").code,
            kRpcInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"method":5})").code, kRpcInvalidRequest);
  const RpcFailure params = FailureOf(R"({"jsonrpc":"2.0","id":3,"method":"x","params":[1]})");
  EXPECT_EQ(params.code, kRpcInvalidRequest);
  EXPECT_EQ(params.id, 3);  // the error still answers the request
}

TEST(McpProtocol, NegotiatesASupportedVersion) {
  EXPECT_EQ(NegotiatedVersion({{"protocolVersion", "2025-03-26"}}), "2025-03-26");
  EXPECT_EQ(NegotiatedVersion({{"protocolVersion", "2025-06-18"}}), "2025-06-18");
  // A version this server does not speak is answered with its own.
  EXPECT_EQ(NegotiatedVersion({{"protocolVersion", "2099-01-01"}}), kMcpProtocolVersion);
  EXPECT_EQ(NegotiatedVersion({{"protocolVersion", 5}}), kMcpProtocolVersion);
  const json result = InitializeResult({{"protocolVersion", "2025-06-18"}});
  EXPECT_TRUE(result["capabilities"].contains("tools"));
  EXPECT_EQ(result["serverInfo"]["name"], "aevatar");
}

TEST(McpProtocol, ToolListIsTheHttpCatalog) {
  const json catalog = ToolCatalogJson({{"python-data", "python"}});
  const json listed = ToolsListResult(catalog);
  ASSERT_EQ(listed["tools"].size(), catalog["tools"].size());
  for (size_t i = 0; i < catalog["tools"].size(); ++i) {
    EXPECT_EQ(listed["tools"][i]["name"], catalog["tools"][i]["name"]);
    EXPECT_EQ(listed["tools"][i]["description"], catalog["tools"][i]["description"]);
    EXPECT_EQ(listed["tools"][i]["inputSchema"], catalog["tools"][i]["input_schema"]);
  }
}

TEST(McpProtocol, WrongTypedCallParamsNameTheMember) {
  auto no_name = ParseToolCallParams({{"arguments", json::object()}});
  ASSERT_FALSE(no_name.ok());
  EXPECT_NE(no_name.status().message().find("params.name"), std::string::npos);
  auto bad_arguments = ParseToolCallParams({{"name", "code_execute"}, {"arguments", "x"}});
  ASSERT_FALSE(bad_arguments.ok());
  EXPECT_NE(bad_arguments.status().message().find("params.arguments"), std::string::npos);
  auto bad_token =
      ParseToolCallParams({{"name", "code_execute"}, {"_meta", {{"progressToken", 1.5}}}});
  EXPECT_FALSE(bad_token.ok());
  auto good = ParseToolCallParams(
      {{"name", "codex_exec"}, {"_meta", {{"progressToken", 4}}}, {"arguments", {{"a", 1}}}});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->progress_token, 4);
  EXPECT_EQ(good->arguments["a"], 1);
}

TEST(McpProtocol, ToolFailureCarriesTheTypedProblem) {
  const json failure = ToolFailure(
      {{"code", "UNSUPPORTED_LANGUAGE"}, {"detail", "no"}, {"diagnostic_id", "diag_1"}});
  EXPECT_EQ(failure["isError"], true);
  EXPECT_EQ(failure["structuredContent"]["code"], "UNSUPPORTED_LANGUAGE");
  const std::string text = failure["content"][0]["text"];
  EXPECT_NE(text.find("UNSUPPORTED_LANGUAGE"), std::string::npos);
  EXPECT_NE(text.find("diag_1"), std::string::npos);
  EXPECT_EQ(ToolSuccess({{"stdout", "hi"}})["isError"], false);
}

}  // namespace
}  // namespace aevatar::orchestrator
