// NodeHub: requests relayed to a connected node over a real WebSocket and
// matched to its answers; offline nodes, replaced connections, dropped
// connections, timeouts and hostile answers.
#include "nyxid/nodes/node_hub.h"

#include <thread>

#include "gtest/gtest.h"
#include "http/server.h"
#include "http/websocket.h"
#include "testing/poll.h"

namespace aevatar::nyxid {
namespace {

using nlohmann::json;

class NodeHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The session holds the hub: a handler thread may finish after Stop.
    auto server = http::Server::Start({}, [hub = hub_](http::Request&) {
      return http::WebSocketUpgrade(
          [hub](http::WebSocket& socket) { hub->Serve("node_1", socket); });
    });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  // Stopping ends the open sessions (their reads fail) and waits for them.
  void TearDown() override { server_->Stop(5); }

  // A node: connects and answers each request with `answer(request)`
  // (nullopt: no answer) until the connection ends.
  std::unique_ptr<http::WebSocket> Node() {
    auto socket = http::ConnectWebSocket("ws://127.0.0.1:" + std::to_string(server_->port()) + "/",
                                         {}, std::chrono::seconds(5));
    EXPECT_TRUE(socket.ok()) << socket.status();
    if (!socket.ok()) return nullptr;
    EXPECT_TRUE(testing::PollUntil([&] { return hub_->Online("node_1"); }));
    return std::move(*socket);
  }

  static void Answer(http::WebSocket* node,
                     const std::function<std::optional<std::string>(const json&)>& answer) {
    while (true) {
      auto message = node->Read();
      if (!message.ok()) return;
      const json request = json::parse(*message, nullptr, false);
      if (auto reply = answer(request)) node->Write(*reply);
    }
  }

  std::shared_ptr<NodeHub> hub_ = std::make_shared<NodeHub>();
  std::unique_ptr<http::Server> server_;
};

TEST_F(NodeHubTest, ANodeThatIsNotConnectedIsOffline) {
  EXPECT_FALSE(hub_->Online("node_1"));
  EXPECT_TRUE(absl::IsUnavailable(
      hub_->Relay("node_1", {{"type", "ssh_exec"}}, std::chrono::seconds(1)).status()));
}

TEST_F(NodeHubTest, ConcurrentRequestsGetTheirOwnAnswers) {
  auto node = Node();
  ASSERT_TRUE(node);
  std::thread answering([&] {
    Answer(node.get(), [](const json& request) {
      return json{{"request_id", request["request_id"]}, {"echo", request["n"]}}.dump();
    });
  });
  std::vector<std::thread> callers;
  std::atomic<int> matched{0};
  for (int n = 0; n < 8; ++n) {
    callers.emplace_back([&, n] {
      auto answer =
          hub_->Relay("node_1", {{"type", "ssh_exec"}, {"n", n}}, std::chrono::seconds(10));
      if (answer.ok() && (*answer)["echo"] == n) ++matched;
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(matched, 8);
  node->Close();
  answering.join();
}

TEST_F(NodeHubTest, HostileAnswersAreDroppedAndTheCallerTimesOut) {
  auto node = Node();
  ASSERT_TRUE(node);
  std::thread answering([&] {
    Answer(node.get(), [](const json&) -> std::optional<std::string> {
      return std::string("{\"request_id\": \"rq_not_asked_for\"}");
    });
  });
  node->Write("not json at all");
  node->Write("[1,2,3]");
  auto answer = hub_->Relay("node_1", {{"type", "ssh_exec"}}, std::chrono::milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(answer.status())) << answer.status();
  node->Close();
  answering.join();
}

TEST_F(NodeHubTest, ADroppedConnectionFailsItsPendingRequests) {
  auto node = Node();
  ASSERT_TRUE(node);
  std::thread dropping([&] {
    Answer(node.get(), [&](const json&) -> std::optional<std::string> {
      node->Close();
      return std::nullopt;
    });
  });
  auto answer = hub_->Relay("node_1", {{"type", "ssh_exec"}}, std::chrono::seconds(10));
  EXPECT_TRUE(absl::IsUnavailable(answer.status())) << answer.status();
  dropping.join();
  EXPECT_TRUE(testing::PollUntil([&] { return !hub_->Online("node_1"); }));
}

TEST_F(NodeHubTest, ANewConnectionReplacesTheOldOne) {
  auto first = Node();
  auto second = Node();
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(first->Read().ok());  // the hub closed the older connection
  std::thread answering([&] {
    Answer(second.get(), [](const json& request) {
      return json{{"request_id", request["request_id"]}, {"from", "second"}}.dump();
    });
  });
  auto answer = hub_->Relay("node_1", {{"type", "ssh_exec"}}, std::chrono::seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ((*answer)["from"], "second");
  hub_->Disconnect("node_1");
  answering.join();
}

}  // namespace
}  // namespace aevatar::nyxid
