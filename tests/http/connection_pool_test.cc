// Keep-alive connection reuse in the HTTP client (ClientRequest::pool): a
// loopback server that counts connections shows when one is reused, when it
// is not, and what happens when the server ends a kept-alive connection.
#include "http/connection_pool.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "testing/counting_http_server.h"
#include "testing/poll.h"
#include "testing/temp_dir.h"
#include "testing/tls_front.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::CountingHttpServer;
using ::aevatar::testing::PollUntil;
using ::aevatar::testing::TlsFront;
using Behavior = CountingHttpServer::Behavior;

ClientRequest PooledRequest(const std::string& method, const std::string& url,
                            std::shared_ptr<ConnectionPool> pool) {
  ClientRequest request;
  request.method = method;
  request.url = url;
  if (method == "POST") request.body = R"({"n":1})";
  request.pool = std::move(pool);
  return request;
}

TEST(ConnectionPool, SequentialRequestsShareOneConnection) {
  CountingHttpServer server(Behavior::kKeepAlive);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  for (int i = 0; i < 5; ++i) {
    auto response = Fetch(PooledRequest(i % 2 ? "POST" : "GET", server.Url("/x"), pool));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, (i % 2 ? "POST " : "GET ") + std::to_string(i + 1));
  }
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(server.requests(), 5);
  EXPECT_EQ(pool->IdleCount(), 1u);
}

TEST(ConnectionPool, WithoutAPoolEveryExchangeHasItsOwnConnection) {
  CountingHttpServer server(Behavior::kKeepAlive);
  ASSERT_TRUE(server.ok());
  for (int i = 0; i < 3; ++i) {
    auto response = Fetch(PooledRequest("GET", server.Url("/x"), nullptr));
    ASSERT_TRUE(response.ok()) << response.status();
  }
  EXPECT_EQ(server.accepted(), 3);
  // `Connection: close` on each request: the client closes, the server sees the end.
  EXPECT_TRUE(PollUntil([&] { return server.closed() == 3; }));
}

TEST(ConnectionPool, ConnectionCloseAnswerIsNotPooled) {
  CountingHttpServer server(Behavior::kConnectionClose);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  for (int i = 0; i < 3; ++i) {
    auto response = Fetch(PooledRequest("GET", server.Url("/x"), pool));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(pool->IdleCount(), 0u);
  }
  EXPECT_EQ(server.accepted(), 3);
}

TEST(ConnectionPool, IdleConnectionClosedByTheServerIsNotUsedForAPost) {
  CountingHttpServer server(Behavior::kCloseAfterAnswer);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  ASSERT_TRUE(Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok());
  EXPECT_EQ(pool->IdleCount(), 1u);  // the answer did not say it would close
  ASSERT_TRUE(PollUntil([&] { return server.closed() == 1; }));
  // The client sees the close before writing: a fresh connection, one POST.
  auto response = Fetch(PooledRequest("POST", server.Url("/x"), pool));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "POST 2");
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(server.requests("POST"), 1);
}

TEST(ConnectionPool, GetOnAConnectionClosedUnderItIsRetriedOnceOnAFreshOne) {
  CountingHttpServer server(Behavior::kDropSecondRequest);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  ASSERT_TRUE(Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok());
  // The server reads this GET on the kept connection and closes without an answer.
  auto response = Fetch(PooledRequest("GET", server.Url("/x"), pool));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "GET 3");
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_EQ(server.requests("GET"), 3);
}

TEST(ConnectionPool, PostOnAConnectionClosedUnderItIsNotReplayed) {
  CountingHttpServer server(Behavior::kDropSecondRequest);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  ASSERT_TRUE(Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok());
  auto response = Fetch(PooledRequest("POST", server.Url("/x"), pool));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("not replayed"), std::string_view::npos)
      << response.status();
  EXPECT_EQ(server.requests("POST"), 1);
  EXPECT_EQ(server.accepted(), 1);
  EXPECT_EQ(pool->IdleCount(), 0u);
}

// A 100 or 103 ahead of the answer is not the answer: taking it for one
// would leave the real answer on the pooled connection for the next caller.
TEST(ConnectionPool, InterimAnswersAreSkippedAndTheConnectionStaysInStep) {
  CountingHttpServer server(Behavior::kInterimFirst);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  for (int i = 0; i < 3; ++i) {
    auto response = Fetch(PooledRequest(i % 2 ? "GET" : "POST", server.Url("/x"), pool));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, (i % 2 ? "GET " : "POST ") + std::to_string(i + 1));
  }
  EXPECT_EQ(server.accepted(), 1);
}

TEST(ConnectionPool, EndlessInterimAnswersEndTheExchangeAndItsConnection) {
  CountingHttpServer server(Behavior::kEndlessInterim);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  auto response = Fetch(PooledRequest("POST", server.Url("/x"), pool));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("interim"), std::string_view::npos)
      << response.status();
  EXPECT_EQ(pool->IdleCount(), 0u);
  EXPECT_EQ(server.requests("POST"), 1);  // not replayed
}

// The project's own server answers `Expect: 100-continue` with a 100 first.
TEST(ConnectionPool, RequestsExpectingContinueGetTheirOwnAnswers) {
  std::atomic<int> calls{0};
  auto server = testing::StartOrDie([&calls](Request&) {
    return JsonResponse(200, "{\"call\":" + std::to_string(++calls) + "}");
  });
  auto pool = std::make_shared<ConnectionPool>();
  for (int i = 1; i <= 3; ++i) {
    ClientRequest request = PooledRequest("POST", testing::Url(*server, "/x"), pool);
    request.headers.Set("Expect", "100-continue");
    auto response = Fetch(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "{\"call\":" + std::to_string(i) + "}");
  }
  EXPECT_EQ(pool->IdleCount(), 1u);
}

TEST(ConnectionPool, IdleConnectionsAreBoundedPerKey) {
  constexpr int kConcurrent = 4;
  // Answers wait until all four requests arrived: four connections at once.
  CountingHttpServer server(Behavior::kKeepAlive, /*hold_until=*/kConcurrent);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>(
      ConnectionPool::Options{.max_idle_per_key = 2, .idle_timeout = std::chrono::seconds(60)});
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kConcurrent; ++i) {
    callers.emplace_back([&] { ok += Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok(); });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(ok, kConcurrent);
  EXPECT_EQ(server.accepted(), kConcurrent);
  EXPECT_EQ(pool->IdleCount(), 2u);
  EXPECT_TRUE(PollUntil([&] { return server.closed() == kConcurrent - 2; }));
}

TEST(ConnectionPool, ConnectionIdlePastTheTimeoutIsNotReused) {
  CountingHttpServer server(Behavior::kKeepAlive);
  ASSERT_TRUE(server.ok());
  const auto idle_timeout = std::chrono::milliseconds(20);
  auto pool = std::make_shared<ConnectionPool>(
      ConnectionPool::Options{.max_idle_per_key = 4, .idle_timeout = idle_timeout});
  ASSERT_TRUE(Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok());
  std::this_thread::sleep_for(2 * idle_timeout);  // at least the timeout has passed
  ASSERT_TRUE(Fetch(PooledRequest("GET", server.Url("/x"), pool)).ok());
  EXPECT_EQ(server.accepted(), 2);
  EXPECT_TRUE(PollUntil([&] { return server.closed() == 1; }));  // the expired one
}

TEST(ConnectionPool, StoppedStreamingExchangeIsNotPooled) {
  CountingHttpServer server(Behavior::kKeepAlive);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  auto response = FetchStreaming(PooledRequest("GET", server.Url("/x"), pool), nullptr,
                                 [](std::string_view) { return false; });  // the consumer went away
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(pool->IdleCount(), 0u);
}

TEST(ConnectionPool, HttpsConnectionsAreReusedOnlyForTheSameTrust) {
  auto server = testing::StartOrDie([](Request&) { return JsonResponse(200, "{}"); });
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"));
  ASSERT_TRUE(front.ok());
  auto pool = std::make_shared<ConnectionPool>();
  const std::string url = "https://localhost:" + std::to_string(front.port()) + "/x";
  ClientRequest request = PooledRequest("GET", url, pool);
  request.tls.ca_file = TlsFront::Fixture("ca.pem");
  for (int i = 0; i < 3; ++i) {
    auto response = Fetch(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "{}");
  }
  EXPECT_EQ(front.handshakes(), 1);
  // The same CA under another file name is another trust configuration: its
  // own connection, verified on its own.
  // In a directory of its own: the suites of other builds may run at once.
  const aevatar::testing::TempDir dir(::testing::TempDir());
  ASSERT_FALSE(dir.path().empty());
  const std::string copy = dir.path() + "/ca-copy.pem";
  std::filesystem::copy_file(TlsFront::Fixture("ca.pem"), copy);
  request.tls.ca_file = copy;
  ASSERT_TRUE(Fetch(request).ok());
  EXPECT_EQ(front.handshakes(), 2);
  EXPECT_EQ(pool->IdleCount(), 2u);
  // Another host name (the certificate covers both) is another connection,
  // whose handshake checks that name.
  request.url = "https://127.0.0.1:" + std::to_string(front.port()) + "/x";
  ASSERT_TRUE(Fetch(request).ok());
  EXPECT_EQ(front.handshakes(), 3);
  EXPECT_EQ(pool->IdleCount(), 3u);
}

// Callers on many threads share one pool (run under TSan: label tsan).
TEST(ConnectionPool, ConcurrentCallersShareThePoolSafely) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  CountingHttpServer server(Behavior::kKeepAlive);
  ASSERT_TRUE(server.ok());
  auto pool = std::make_shared<ConnectionPool>();
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto response = Fetch(PooledRequest((t + i) % 2 ? "POST" : "GET", server.Url("/x"), pool));
        ok += response.ok() && response->status == 200;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(ok, kThreads * kPerThread);
  EXPECT_EQ(server.requests(), kThreads * kPerThread);
  // A caller holds one connection at a time and returns it before its next call.
  EXPECT_LE(server.accepted(), kThreads);
  EXPECT_GE(pool->IdleCount(), 1u);
  EXPECT_LE(pool->IdleCount(), static_cast<size_t>(kThreads));
}

}  // namespace
}  // namespace aevatar::http
