#include "chrono/codex/codex_relay.h"

#include <string>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/server.h"
#include "nlohmann/json.hpp"

namespace aevatar::chrono {
namespace {

// Plays NyxID: records the last request and answers with an SSE body.
class Upstream {
 public:
  Upstream() {
    auto server = http::Server::Start({}, [this](http::Request& request) {
      absl::MutexLock lock(&mu_);
      last_ = request;
      http::Response response;
      response.status = 201;
      response.headers.Set("Content-Type", "text/event-stream");
      response.headers.Set("X-Upstream-Secret", "no");
      response.body = "data: {\"type\":\"response.completed\"}\n\n";
      return response;
    });
    EXPECT_TRUE(server.ok());
    server_ = std::move(*server);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }
  http::Request last() {
    absl::MutexLock lock(&mu_);
    return last_;
  }

 private:
  absl::Mutex mu_;
  http::Request last_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<http::Server> server_;
};

CodexRelayTarget Target(const std::string& url) {
  CodexRelayTarget target;
  target.nyxid_url = url;
  target.user_service_id = "us_1:a";
  target.run_key = "relay_key_1";
  target.delegation_token = "DELEGATION-TOKEN";
  target.timeout = std::chrono::seconds(10);
  return target;
}

http::Request Request(const std::string& method, const std::string& path,
                      const std::string& bearer = "relay_key_1") {
  http::Request request;
  request.method = method;
  request.path = path;
  request.target = path;
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  return request;
}

std::string Drain(http::Response& response) {
  if (!response.stream) return response.body;
  std::string body;
  response.stream([&](std::string_view chunk) {
    body += chunk;
    return true;
  });
  return body;
}

TEST(CodexRelay, UpstreamUrlIsTheLlmRouteWithTheCallersRouteId) {
  CodexRelayTarget target = Target("http://nyxid:8080/");
  EXPECT_EQ(CodexRelayUpstreamUrl(target),
            "http://nyxid:8080/api/v1/proxy/chrono-llm-public/responses?_nyxid_via=us_1%3Aa");
}

TEST(CodexRelay, OnlyPostV1ResponsesIsServed) {
  const CodexRelayTarget target = Target("http://127.0.0.1:9");
  for (auto [method, path] : {std::pair{"GET", "/v1/responses"},
                              {"POST", "/v1/responses/x"},
                              {"POST", "/v1/models"},
                              {"POST", "/api/v1/proxy/chrono-sandbox/execute"}}) {
    http::Request request = Request(method, path);
    EXPECT_EQ(HandleCodexRelayRequest(target, request).status, 404) << method << " " << path;
  }
  http::Request with_query = Request("POST", "/v1/responses");
  with_query.query = "_nyxid_via=other";
  EXPECT_EQ(HandleCodexRelayRequest(target, with_query).status, 404);
}

TEST(CodexRelay, TheRunKeyIsRequired) {
  const CodexRelayTarget target = Target("http://127.0.0.1:9");
  for (const std::string bearer : {"", "relay_key_2", "DELEGATION-TOKEN"}) {
    http::Request request = Request("POST", "/v1/responses", bearer);
    http::Response response = HandleCodexRelayRequest(target, request);
    EXPECT_EQ(response.status, 401) << bearer;
    EXPECT_EQ(nlohmann::json::parse(response.body)["code"], "RELAY_KEY_INVALID");
  }
}

TEST(CodexRelay, ForwardsOnlyTheBodyAndThreeHeadersWithTheDelegationToken) {
  Upstream upstream;
  const CodexRelayTarget target = Target(upstream.url());
  http::Request request = Request("POST", "/v1/responses");
  request.headers.Set("Content-Type", "application/json");
  request.headers.Set("Accept", "text/event-stream");
  request.headers.Set("Cookie", "c=1");
  request.headers.Set("X-NyxID-Delegation-Token", "forged");
  request.headers.Set("OpenAI-Beta", "x");
  request.body = R"({"model":"m"})";
  http::Response response = HandleCodexRelayRequest(target, request);
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.headers.Get("Content-Type"), "text/event-stream");
  EXPECT_FALSE(response.headers.Get("X-Upstream-Secret").has_value());
  EXPECT_EQ(Drain(response), "data: {\"type\":\"response.completed\"}\n\n");

  const http::Request seen = upstream.last();
  EXPECT_EQ(seen.path, "/api/v1/proxy/chrono-llm-public/responses");
  EXPECT_EQ(seen.QueryParam("_nyxid_via"), "us_1:a");
  EXPECT_EQ(seen.headers.Get("Authorization"), "Bearer DELEGATION-TOKEN");
  EXPECT_EQ(seen.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(seen.headers.Get("Accept"), "text/event-stream");
  for (const char* dropped : {"Cookie", "X-NyxID-Delegation-Token", "OpenAI-Beta"}) {
    EXPECT_FALSE(seen.headers.Get(dropped).has_value()) << dropped;
  }
  EXPECT_EQ(seen.body, R"({"model":"m"})");
}

TEST(CodexRelay, UnreachableNyxidIs502) {
  const CodexRelayTarget target = Target("http://127.0.0.1:9");
  http::Request request = Request("POST", "/v1/responses");
  EXPECT_EQ(HandleCodexRelayRequest(target, request).status, 502);
}

}  // namespace
}  // namespace aevatar::chrono
