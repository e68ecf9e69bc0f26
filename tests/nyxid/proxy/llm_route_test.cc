// The llm route's request rules and upstream headers, as pure functions.
#include "nyxid/proxy/llm_route.h"

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::nyxid {
namespace {

CatalogService Llm(std::vector<std::string> models) {
  CatalogService service;
  service.kind = ServiceKind::kLlm;
  service.provider_api_key = "sk-provider";
  service.model_allowlist = std::move(models);
  return service;
}

std::string CodeOf(const CatalogService& catalog, const std::string& method,
                   const std::string& body, std::string_view rest = "responses") {
  http::Request request;
  request.method = method;
  request.body = body;
  absl::Status st = CheckLlmRequest(catalog, request, rest);
  return st.ok() ? "OK" : base::ApiCode(st);
}

TEST(LlmRoute, OnlyAnAllowlistedModelPassesAndAnEmptyListRefusesAll) {
  const CatalogService llm = Llm({"gpt-a", "gpt-b"});
  EXPECT_EQ(CodeOf(llm, "POST", R"({"model":"gpt-b","input":[]})"), "OK");
  EXPECT_EQ(CodeOf(llm, "POST", R"({"model":"gpt-c"})"), "LLM_MODEL_NOT_ALLOWED");
  EXPECT_EQ(CodeOf(llm, "POST", R"({"model":"gpt-a "})"), "LLM_MODEL_NOT_ALLOWED");
  EXPECT_EQ(CodeOf(Llm({}), "POST", R"({"model":"gpt-a"})"), "LLM_MODEL_NOT_ALLOWED");
  CatalogService keyless = llm;
  keyless.provider_api_key.clear();
  EXPECT_EQ(CodeOf(keyless, "POST", R"({"model":"gpt-a"})"), "LLM_PROVIDER_KEY_MISSING");
}

TEST(LlmRoute, MalformedRequestsAreTyped) {
  const CatalogService llm = Llm({"gpt-a"});
  for (const char* body : {"", "[]", "nope", R"({"model":null})", R"({"model":["gpt-a"]})",
                           R"({"model":""})", R"({"input":"x"})"}) {
    EXPECT_EQ(CodeOf(llm, "POST", body), "LLM_REQUEST_INVALID") << body;
  }
  EXPECT_EQ(CodeOf(llm, "GET", ""), "LLM_METHOD_NOT_ALLOWED");
  EXPECT_EQ(CodeOf(llm, "POST", R"({"model":"gpt-a"})", "v1/responses"), "LLM_ENDPOINT_NOT_FOUND");
  EXPECT_EQ(CodeOf(llm, "POST", R"({"model":"gpt-a"})", ""), "LLM_ENDPOINT_NOT_FOUND");
}

TEST(LlmRoute, UpstreamGetsContentTypeAcceptAndTheProviderKeyOnly) {
  http::Headers caller;
  caller.Set("Authorization", "Bearer caller-token");
  caller.Set("X-NyxID-Delegation-Token", "delegation");
  caller.Set("Cookie", "s=1");
  caller.Set("Api-Key", "caller-key");
  caller.Set("Accept", "text/event-stream");
  caller.Set("Content-Type", "application/json; charset=utf-8");
  http::Headers out = LlmUpstreamHeaders(caller, "sk-provider");
  EXPECT_EQ(out.fields().size(), 3u);
  EXPECT_EQ(out.Get("Authorization").value_or(""), "Bearer sk-provider");
  EXPECT_EQ(out.Get("Accept").value_or(""), "text/event-stream");
  EXPECT_EQ(out.Get("Content-Type").value_or(""), "application/json; charset=utf-8");
  EXPECT_EQ(LlmUpstreamHeaders({}, "k").Get("Content-Type").value_or(""), "application/json");
}

}  // namespace
}  // namespace aevatar::nyxid
