#include "http/openapi.h"

#include <string>
#include <vector>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "http/router.h"
#include "nlohmann/json.hpp"
#include "testing/openapi_check.h"

namespace aevatar::http {
namespace {

using nlohmann::json;

constexpr char kShared[] = R"({"components": {"schemas": {"Problem": {"type": "object"}}}})";
constexpr char kItems[] = R"({
  "info": {"title": "t", "version": "1"},
  "paths": {"/items": {"get": {"responses": {"200": {"description": "ok"}}}},
            "/items/{id}": {"get": {"responses": {"200": {"description": "ok"}}}}},
  "components": {"schemas": {"Item": {"type": "object"}}}})";
constexpr char kMoreItems[] = R"({
  "paths": {"/items": {"post": {"responses": {"201": {"description": "made"}}}}}})";

Response Ok(Request&) { return JsonResponse(200, "{}"); }

TEST(OpenApi, FragmentsMergeOperationByOperationUnderOpenApi31) {
  auto document = AssembleOpenApi(
      {{"shared.json", kShared}, {"items.json", kItems}, {"more.json", kMoreItems}});
  ASSERT_TRUE(document.ok()) << document.status();
  const json parsed = json::parse(*document);
  EXPECT_EQ(parsed["openapi"], "3.1.0");
  EXPECT_EQ(parsed["info"]["title"], "t");
  EXPECT_TRUE(parsed["paths"]["/items"].contains("get"));
  EXPECT_TRUE(parsed["paths"]["/items"].contains("post"));
  EXPECT_TRUE(parsed["components"]["schemas"].contains("Problem"));
  EXPECT_TRUE(parsed["components"]["schemas"].contains("Item"));
}

TEST(OpenApi, TheSameOperationInTwoFragmentsIsAnErrorNamingTheFile) {
  auto document = AssembleOpenApi({{"items.json", kItems}, {"again.json", kItems}});
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(document.status().message().find("again.json"), std::string::npos);
}

TEST(OpenApi, AFragmentThatIsNotAJsonObjectIsAnErrorNamingTheFile) {
  for (const char* text : {"[1]", "{\"paths\": ", "{\"paths\": []}"}) {
    auto document = AssembleOpenApi({{"broken.json", text}});
    ASSERT_FALSE(document.ok()) << text;
    EXPECT_NE(document.status().message().find("broken.json"), std::string::npos) << text;
  }
}

TEST(OpenApi, TheRestSegmentIsAPlainPathParameter) {
  EXPECT_EQ(OpenApiPathOf("/api/v1/proxy/{slug}/{path...}"), "/api/v1/proxy/{slug}/{path}");
  EXPECT_EQ(OpenApiPathOf("/executions/{id}/result"), "/executions/{id}/result");
}

// The handler serves what the router has when first asked: a route added
// after the handler counts, a documented route the router lacks is left out.
TEST(OpenApi, ServedDocumentKeepsOnlyTheRoutersOperations) {
  Router router;
  router.Add(
      "GET", "/openapi.json",
      OpenApiHandler(
          &router, {{"shared.json", kShared}, {"items.json", kItems}, {"more.json", kMoreItems}}));
  router.Add("GET", "/items", Ok);
  router.Add("POST", "/items", Ok);
  Request request;
  request.method = "GET";
  request.path = request.target = "/openapi.json";
  const Response response = router.Handle(request);
  ASSERT_EQ(response.status, 200);
  const json served = json::parse(response.body);
  EXPECT_TRUE(served["paths"]["/items"].contains("get"));
  EXPECT_TRUE(served["paths"]["/items"].contains("post"));
  EXPECT_FALSE(served["paths"].contains("/items/{id}"));
}

TEST(OpenApi, AFragmentThatDoesNotAssembleIsServedAsATypedProblem) {
  Router router;
  router.Add("GET", "/openapi.json", OpenApiHandler(&router, {{"broken.json", "nope"}}));
  Request request;
  request.method = "GET";
  request.path = request.target = "/openapi.json";
  const Response response = router.Handle(request);
  EXPECT_EQ(response.status, 500);
  const json problem = json::parse(response.body);
  EXPECT_EQ(problem["code"], "OPENAPI_INVALID");
  EXPECT_FALSE(problem.value("diagnostic_id", "").empty());
}

// The coverage check (tests/testing/openapi_check.h) on a small router.
constexpr char kSelf[] = R"({
  "paths": {"/openapi.json": {"get": {"responses": {"200": {"description": "this"}}}}}})";

void CheckRouter(const std::vector<std::string>& patterns) {
  Router router;
  const std::vector<OpenApiFragment> fragments = {
      {"shared.json", kShared}, {"self.json", kSelf}, {"items.json", kItems}};
  router.Add("GET", "/openapi.json", OpenApiHandler(&router, fragments));
  for (const std::string& route : patterns) {
    const size_t space = route.find(' ');
    router.Add(route.substr(0, space), route.substr(space + 1), Ok);
  }
  testing::ExpectOpenApiMatchesRouter(router, fragments, "src/x/openapi/");
}

// The failure messages `CheckRouter(patterns)` reports.
std::string FailuresOf(const std::vector<std::string>& patterns) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    CheckRouter(patterns);
  }
  std::string messages;
  for (int i = 0; i < results.size(); ++i) {
    messages += std::string(results.GetTestPartResult(i).message()) + "\n";
  }
  return messages;
}

TEST(OpenApiCoverage, ARouterMatchingItsDocumentPasses) {
  EXPECT_EQ(FailuresOf({"GET /items", "GET /items/{id}"}), "");
}

TEST(OpenApiCoverage, AnUndocumentedRouteIsNamedWithWhereToDescribeIt) {
  const std::string failures = FailuresOf({"GET /items", "GET /items/{id}", "POST /mcp"});
  EXPECT_NE(failures.find("POST /mcp is routed but missing from the OpenAPI document: add its "
                          "path item (request body, responses, problem+json errors) to a file in "
                          "src/x/openapi/"),
            std::string::npos)
      << failures;
}

TEST(OpenApiCoverage, ADocumentedOperationWithoutARouteIsNamedWithItsFile) {
  const std::string failures = FailuresOf({"GET /items"});
  EXPECT_NE(failures.find("GET /items/{id} is in the OpenAPI document but the router has no such "
                          "route: remove it from items.json"),
            std::string::npos)
      << failures;
}

}  // namespace
}  // namespace aevatar::http
