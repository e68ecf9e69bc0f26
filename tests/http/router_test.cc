#include "http/router.h"

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"

namespace aevatar::http {
namespace {

using testing::StartOrDie;
using testing::Url;

// Echoes which route answered and the path parameters it saw.
Handler Named(std::string name) {
  return [name](Request& request) {
    nlohmann::json body = {{"route", name}, {"params", request.path_params}};
    return JsonResponse(200, body.dump());
  };
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/healthz", Named("healthz"));
    router_.Add("POST", "/executions", Named("submit"));
    router_.Add("GET", "/executions/{id}", Named("status"));
    router_.Add("GET", "/executions/stats", Named("stats"));
    router_.Add("GET", "/executions/{id}/result", Named("result"));
    router_.Add("POST", "/executions/{id}/cancel", Named("cancel"));
    router_.Add("GET", "/api/v1/proxy/{slug}/{path...}", Named("proxy"));
    router_.Add("POST", "/api/v1/proxy/{slug}/{path...}", Named("proxy-post"));
    server_ = StartOrDie([this](Request& request) { return router_.Handle(request); });
    ASSERT_NE(server_, nullptr);
  }

  ClientResponse Call(const std::string& method, const std::string& path) {
    ClientRequest request;
    request.method = method;
    request.url = Url(*server_, path);
    auto response = Fetch(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : ClientResponse{};
  }

  nlohmann::json CallJson(const std::string& method, const std::string& path) {
    ClientResponse response = Call(method, path);
    EXPECT_EQ(response.status, 200) << response.body;
    return nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  }

  Router router_;
  std::unique_ptr<Server> server_;
};

TEST_F(RouterTest, LiteralRoutesAndPathParamsOverLoopback) {
  EXPECT_EQ(CallJson("GET", "/healthz")["route"], "healthz");
  EXPECT_EQ(CallJson("POST", "/executions")["route"], "submit");
  nlohmann::json status = CallJson("GET", "/executions/op_42");
  EXPECT_EQ(status["route"], "status");
  EXPECT_EQ(status["params"]["id"], "op_42");
  nlohmann::json result = CallJson("GET", "/executions/op_7/result");
  EXPECT_EQ(result["route"], "result");
  EXPECT_EQ(result["params"]["id"], "op_7");
  EXPECT_EQ(CallJson("POST", "/executions/op_7/cancel")["route"], "cancel");
}

TEST_F(RouterTest, LiteralSegmentBeatsParamWhateverTheOrder) {
  EXPECT_EQ(CallJson("GET", "/executions/stats")["route"], "stats");
}

TEST_F(RouterTest, ParamValuesArePercentDecoded) {
  EXPECT_EQ(CallJson("GET", "/executions/op%201")["params"]["id"], "op 1");
}

TEST_F(RouterTest, RestSegmentTakesTheRemainingPath) {
  nlohmann::json deep = CallJson("GET", "/api/v1/proxy/chrono-sandbox/executions/op_1/result?x=1");
  EXPECT_EQ(deep["route"], "proxy");
  EXPECT_EQ(deep["params"]["slug"], "chrono-sandbox");
  EXPECT_EQ(deep["params"]["path"], "executions/op_1/result");
  nlohmann::json empty = CallJson("POST", "/api/v1/proxy/chrono-sandbox");
  EXPECT_EQ(empty["route"], "proxy-post");
  EXPECT_EQ(empty["params"]["path"], "");
}

TEST_F(RouterTest, UnknownPathIs404Problem) {
  for (const char* path : {"/nope", "/executions/op_1/other", "/healthz/extra", "/executions/"}) {
    ClientResponse response = Call("GET", path);
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_EQ(response.headers.Get("Content-Type"), "application/problem+json");
    auto body = nlohmann::json::parse(response.body);
    EXPECT_EQ(body["code"], "NOT_FOUND");
    EXPECT_EQ(body["diagnostic_id"].get<std::string>().rfind("diag_", 0), 0u);
  }
}

TEST_F(RouterTest, KnownPathWithOtherMethodIs405WithAllow) {
  ClientResponse response = Call("DELETE", "/executions/op_1");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(response.headers.Get("Allow"), "GET, HEAD");
  EXPECT_EQ(nlohmann::json::parse(response.body)["code"], "METHOD_NOT_ALLOWED");

  ClientResponse post_only = Call("GET", "/executions");
  EXPECT_EQ(post_only.status, 405);
  EXPECT_EQ(post_only.headers.Get("Allow"), "POST");
}

TEST_F(RouterTest, HeadFallsBackToGetWithoutBody) {
  ClientResponse response = Call("HEAD", "/healthz");
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(response.body.empty());
  EXPECT_NE(response.headers.Get("Content-Length"), "0");
}

// Whether HEAD falls back to GET is decided per path: a HEAD route on one
// path takes nothing from another path that has only GET.
TEST(Router, HeadFallsBackToGetOnEveryPathWithoutAHeadRoute) {
  Router router;
  router.Add("GET", "/items/{id}", Named("item"));
  router.Add("GET", "/status", Named("status-get"));
  router.Add("HEAD", "/status", Named("status-head"));
  Request request;
  request.method = "HEAD";
  request.path = "/items/7";
  Response fallback = router.Handle(request);
  EXPECT_EQ(fallback.status, 200);
  EXPECT_EQ(nlohmann::json::parse(fallback.body)["route"], "item");
  EXPECT_EQ(nlohmann::json::parse(fallback.body)["params"]["id"], "7");
  request.path = "/status";
  request.path_params.clear();
  EXPECT_EQ(nlohmann::json::parse(router.Handle(request).body)["route"], "status-head");
  request.method = "GET";
  EXPECT_EQ(nlohmann::json::parse(router.Handle(request).body)["route"], "status-get");
}

TEST(Router, HandleWorksWithoutAServer) {
  Router router;
  router.Add("GET", "/", Named("root"));
  Request request;
  request.method = "GET";
  request.path = "/";
  EXPECT_EQ(router.Handle(request).status, 200);
  request.path = "/x";
  EXPECT_EQ(router.Handle(request).status, 404);
}

}  // namespace
}  // namespace aevatar::http
