// WebSockets: a handler's upgrade, the client, text messages both ways at
// once, refusals, limits, and a server stopping under an open connection.
#include "http/websocket.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "http_test_util.h"

namespace aevatar::http {
namespace {

using testing::StartOrDie;

std::string WsUrl(const Server& server, const std::string& path) {
  return "ws://127.0.0.1:" + std::to_string(server.port()) + path;
}

// A server whose /ws echoes each message back; it refuses a request without
// the header "X-Key: k".
std::unique_ptr<Server> EchoServer(WebSocketOptions options = {}) {
  return StartOrDie([options](Request& request) {
    if (request.headers.Get("X-Key").value_or("") != "k") return JsonResponse(401, "{}");
    return WebSocketUpgrade(
        [](WebSocket& socket) {
          while (true) {
            auto message = socket.Read();
            if (!message.ok() || !socket.Write(*message)) return;
          }
        },
        options);
  });
}

Headers Key() {
  Headers headers;
  headers.Set("X-Key", "k");
  return headers;
}

TEST(WebSocketTest, MessagesGoBothWays) {
  auto server = EchoServer();
  auto socket = ConnectWebSocket(WsUrl(*server, "/ws"), Key(), std::chrono::seconds(5));
  ASSERT_TRUE(socket.ok()) << socket.status();
  for (const std::string& text : {std::string("hello"), std::string(200'000, 'x'), std::string()}) {
    ASSERT_TRUE((*socket)->Write(text));
    auto echoed = (*socket)->Read();
    ASSERT_TRUE(echoed.ok()) << echoed.status();
    EXPECT_EQ(*echoed, text);
  }
}

TEST(WebSocketTest, ARefusedUpgradeNamesTheStatus) {
  auto server = EchoServer();
  auto socket = ConnectWebSocket(WsUrl(*server, "/ws"), {}, std::chrono::seconds(5));
  ASSERT_FALSE(socket.ok());
  EXPECT_TRUE(absl::IsUnavailable(socket.status()));
  EXPECT_TRUE(absl::StrContains(socket.status().message(), "401")) << socket.status();
  EXPECT_TRUE(absl::IsInvalidArgument(
      ConnectWebSocket("http://127.0.0.1:1/ws", {}, std::chrono::seconds(1)).status()));
}

TEST(WebSocketTest, APlainRequestToAnUpgradeEndpointIs400) {
  auto server = EchoServer();
  ClientRequest request;
  request.url = testing::Url(*server, "/ws");
  request.headers.Set("X-Key", "k");
  const ClientResponse response = testing::MustFetch(request);
  EXPECT_EQ(response.status, 400);
  EXPECT_TRUE(absl::StrContains(response.body, "WEBSOCKET_UPGRADE_REQUIRED")) << response.body;
}

TEST(WebSocketTest, ReadsAndWritesRunAtOnceOnTwoThreads) {
  // The server writes a stream of numbered messages while it reads the
  // client's; the client does the same.
  constexpr int kMessages = 200;
  auto server = StartOrDie([](Request&) {
    return WebSocketUpgrade([](WebSocket& socket) {
      std::thread writer([&] {
        for (int i = 0; i < kMessages; ++i) socket.Write("s" + std::to_string(i));
      });
      for (int i = 0; i < kMessages; ++i) {
        if (!socket.Read().ok()) break;
      }
      writer.join();
      socket.Write("done");
    });
  });
  auto socket = ConnectWebSocket(WsUrl(*server, "/"), {}, std::chrono::seconds(5));
  ASSERT_TRUE(socket.ok()) << socket.status();
  std::thread writer([&] {
    for (int i = 0; i < kMessages; ++i) (*socket)->Write("c" + std::to_string(i));
  });
  int received = 0;
  std::string last;
  while (last != "done") {
    auto message = (*socket)->Read();
    ASSERT_TRUE(message.ok()) << message.status();
    last = *message;
    if (last != "done") {
      EXPECT_EQ(last, "s" + std::to_string(received++));
    }
  }
  writer.join();
  EXPECT_EQ(received, kMessages);
}

TEST(WebSocketTest, AMessagePastTheLimitEndsTheConnection) {
  WebSocketOptions small;
  small.max_message_bytes = 1024;
  std::atomic<bool> too_large{false};
  auto server = StartOrDie([&too_large, small](Request&) {
    return WebSocketUpgrade(
        [&too_large](WebSocket& socket) {
          too_large = absl::IsResourceExhausted(socket.Read().status());
        },
        small);
  });
  auto socket = ConnectWebSocket(WsUrl(*server, "/"), {}, std::chrono::seconds(5));
  ASSERT_TRUE(socket.ok()) << socket.status();
  (*socket)->Write(std::string(4096, 'x'));
  EXPECT_FALSE((*socket)->Read().ok());  // the server closed it
  server->Stop();
  EXPECT_TRUE(too_large);
}

TEST(WebSocketTest, StoppingTheServerEndsOpenConnectionsPromptly) {
  auto server = EchoServer();
  auto socket = ConnectWebSocket(WsUrl(*server, "/ws"), Key(), std::chrono::seconds(5));
  ASSERT_TRUE(socket.ok()) << socket.status();
  ASSERT_TRUE((*socket)->Write("ping"));
  ASSERT_TRUE((*socket)->Read().ok());
  const auto start = std::chrono::steady_clock::now();
  server->Stop(/*grace_secs=*/30);
  // The session blocked in Read ends as soon as the server stops, not
  // after the grace period.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_FALSE((*socket)->Read().ok());
}

TEST(WebSocketTest, ClosingFromAnotherThreadUnblocksARead) {
  auto server = EchoServer();
  auto socket = ConnectWebSocket(WsUrl(*server, "/ws"), Key(), std::chrono::seconds(5));
  ASSERT_TRUE(socket.ok()) << socket.status();
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (*socket)->Close();
  });
  EXPECT_FALSE((*socket)->Read().ok());
  closer.join();
  EXPECT_FALSE((*socket)->Write("after close"));
}

}  // namespace
}  // namespace aevatar::http
