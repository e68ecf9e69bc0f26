#include "http/client.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "testing/poll.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::kHangGuard;
using std::chrono::milliseconds;
using testing::Gate;
using testing::StartOrDie;
using testing::Url;

TEST(HttpClient, SendsHostAndContentLength) {
  auto server = StartOrDie([](Request& request) {
    nlohmann::json seen = {{"host", request.headers.Get("Host").value_or("")},
                           {"length", request.headers.Get("Content-Length").value_or("")},
                           {"body", request.body}};
    return JsonResponse(200, seen.dump());
  });
  ClientRequest request;
  request.method = "PUT";
  request.url = "http://localhost:" + std::to_string(server->port()) + "/x";  // by name
  request.body = "abc";
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok()) << response.status();
  auto seen = nlohmann::json::parse(response->body);
  EXPECT_EQ(seen["host"], "localhost:" + std::to_string(server->port()));
  EXPECT_EQ(seen["length"], "3");
  EXPECT_EQ(seen["body"], "abc");
}

TEST(HttpClient, ErrorStatusesAreSuccessfulExchanges) {
  auto server = StartOrDie([](Request&) { return JsonResponse(418, R"({"tea":true})"); });
  ClientRequest request;
  request.url = Url(*server, "/");
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 418);
}

TEST(HttpClient, SlowServerIsDeadlineExceeded) {
  auto release = std::make_shared<Gate>();
  auto server = StartOrDie([release](Request&) {
    release->WaitFor(kHangGuard);  // answers only once the test has its result
    return JsonResponse(200, "{}");
  });
  ClientRequest request;
  request.url = Url(*server, "/slow");
  request.timeout = milliseconds(300);
  auto response = Fetch(request);
  // The client gave up on its own deadline: the server never answered.
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded) << response.status();
  release->Open();
}

TEST(HttpClient, RefusedConnectionIsUnavailable) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "{}"); });
  std::string url = Url(*server, "/");
  server->Stop();
  server.reset();
  ClientRequest request;
  request.url = url;
  auto response = Fetch(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
}

TEST(HttpClient, OversizedResponseIsResourceExhausted) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, std::string(10000, 'x')); });
  ClientRequest request;
  request.url = Url(*server, "/");
  request.max_response_bytes = 1000;
  EXPECT_EQ(Fetch(request).status().code(), absl::StatusCode::kResourceExhausted);
  request.max_response_bytes = 10000;
  EXPECT_TRUE(Fetch(request).ok());
}

TEST(HttpClient, BadUrlIsInvalidArgument) {
  ClientRequest request;
  request.url = "ftp://127.0.0.1/";
  EXPECT_EQ(Fetch(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HttpClient, StreamingConsumerCanStopTheExchange) {
  auto server = StartOrDie([](Request&) {
    Response response;
    response.stream = [](const ChunkWriter& write) {
      for (int i = 0; i < 100 && write("tick\n"); ++i)
        std::this_thread::sleep_for(milliseconds(10));
    };
    return response;
  });
  ClientRequest request;
  request.url = Url(*server, "/");
  int chunks = 0;
  auto response = FetchStreaming(request, nullptr, [&](std::string_view) { return ++chunks < 2; });
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(chunks, 2);
}

}  // namespace
}  // namespace aevatar::http
