#include "aevatar/clients/executions_transport.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "http/server.h"

// ProxyExecutionsTransport against a real http::Server on loopback standing
// in for NyxID's public proxy: it records what arrives and answers like the
// executor behind the route would.
namespace aevatar::orchestrator {
namespace {

static_assert(kExchangeBound == std::chrono::seconds(15));

const char kSlug[] = "chrono-sandbox";
const char kRouteId[] = "us_7f3a";
const char kCredential[] = "nyxid_ag_secretvalue";

struct Seen {
  std::string method;
  std::string path;
  std::optional<std::string> via;
  std::optional<std::string> key;
  std::optional<std::string> authorization;
  std::optional<std::string> if_none_match;
  std::string body;
};

// Shared with handlers by shared_ptr so a late handler never touches freed memory.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Seen> seen;
  bool release = false;  // lets a deliberately slow handler finish
};

class ProxyExecutionsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto recorder = recorder_;
    auto server = http::Server::Start({}, [recorder](http::Request& request) {
      std::unique_lock lock(recorder->mu);
      recorder->seen.push_back({request.method, request.path, request.QueryParam("_nyxid_via"),
                                request.headers.Get("Idempotency-Key"),
                                request.headers.Get("Authorization"),
                                request.headers.Get("If-None-Match"), request.body});
      if (request.headers.Get("Idempotency-Key") == "tool:v1:operation:slow") {
        recorder->cv.wait_for(lock, std::chrono::seconds(10), [&] { return recorder->release; });
      }
      http::Response response = http::JsonResponse(
          202, R"({"operation_id":"op_abc","status":"queued","status_url":"/elsewhere"})");
      response.headers.Set("ETag", "\"e1\"");
      response.headers.Set("Retry-After", "1");
      return response;
    });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    nyxid_ = std::make_unique<NyxidClient>("http://127.0.0.1:" + std::to_string(server_->port()),
                                           "unused-introspection-secret");
  }

  void TearDown() override {
    {
      std::lock_guard lock(recorder_->mu);
      recorder_->release = true;
    }
    recorder_->cv.notify_all();
    if (server_) server_->Stop();
  }

  ProxyExecutionsTransport Transport(
      std::chrono::milliseconds bound = std::chrono::milliseconds(kExchangeBound)) {
    return ProxyExecutionsTransport(nyxid_.get(), kCredential, kSlug, kRouteId, bound);
  }

  std::vector<Seen> seen() {
    std::lock_guard lock(recorder_->mu);
    return recorder_->seen;
  }

  std::shared_ptr<Recorder> recorder_ = std::make_shared<Recorder>();
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<NyxidClient> nyxid_;
};

TEST_F(ProxyExecutionsTransportTest, SubmitHitsTheExactProxyRouteWithKeyAndBearer) {
  auto transport = Transport();
  const NyxidReply reply = transport.Submit("tool:v1:operation:abc123",
                                            {{"language", "python"}, {"script", "print(1)"}});
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.headers.Get("ETag"), "\"e1\"");  // what reconciliation relies on
  EXPECT_EQ(reply.headers.Get("Retry-After"), "1");
  EXPECT_EQ(reply.body["operation_id"], "op_abc");
  const auto all = seen();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].method, "POST");
  EXPECT_EQ(all[0].path, "/api/v1/proxy/chrono-sandbox/executions");
  EXPECT_EQ(all[0].via, kRouteId);
  EXPECT_EQ(all[0].key, "tool:v1:operation:abc123");
  EXPECT_EQ(all[0].authorization, std::string("Bearer ") + kCredential);
  EXPECT_EQ(nlohmann::json::parse(all[0].body)["script"], "print(1)");
}

TEST_F(ProxyExecutionsTransportTest, StatusResultAndCancelPathsAreBuiltFromTheId) {
  auto transport = Transport();
  transport.Status("op_abc", "\"e1\"");
  transport.Status("op_abc", "");
  transport.Result("op_abc");
  transport.Cancel("op_abc", 1'800'000'120'000);
  const auto all = seen();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].method, "GET");
  EXPECT_EQ(all[0].path, "/api/v1/proxy/chrono-sandbox/executions/op_abc");
  EXPECT_EQ(all[0].if_none_match, "\"e1\"");
  EXPECT_FALSE(all[1].if_none_match.has_value());
  EXPECT_EQ(all[2].path, "/api/v1/proxy/chrono-sandbox/executions/op_abc/result");
  EXPECT_EQ(all[3].method, "POST");
  EXPECT_EQ(all[3].path, "/api/v1/proxy/chrono-sandbox/executions/op_abc/cancel");
  EXPECT_EQ(nlohmann::json::parse(all[3].body)["deadline_unix_ms"], 1'800'000'120'000);
  for (const Seen& s : all) {
    EXPECT_EQ(s.via, kRouteId);
    EXPECT_EQ(s.authorization, std::string("Bearer ") + kCredential);
    EXPECT_FALSE(s.key.has_value());  // the key belongs to the submit only
  }
}

TEST_F(ProxyExecutionsTransportTest, InvalidOperationIdOrKeyMakesNoExchange) {
  auto transport = Transport();
  for (const char* bad : {"op_../admin", "op_A", "op_", "../executions", "op_x?y=1", "op_x/result",
                          "op_ab\r\nX: 1"}) {
    const NyxidReply reply = transport.Status(bad, "");
    EXPECT_EQ(reply.status, kLocalRejectStatus) << bad;
    EXPECT_EQ(reply.body["code"], kInvalidOperationIdCode);
    EXPECT_EQ(transport.Result(bad).status, kLocalRejectStatus);
    EXPECT_EQ(transport.Cancel(bad, 1).status, kLocalRejectStatus);
  }
  EXPECT_EQ(transport.Submit("", {}).status, kLocalRejectStatus);
  EXPECT_EQ(transport.Submit("key\r\nX-Injected: 1", {}).status, kLocalRejectStatus);
  EXPECT_EQ(transport.Submit(std::string(256, 'k'), {}).status, kLocalRejectStatus);
  EXPECT_TRUE(seen().empty());
}

TEST_F(ProxyExecutionsTransportTest, EveryExchangeIsBoundedAtFifteenSeconds) {
  EXPECT_EQ(Transport().bound(), std::chrono::seconds(15));
  // A caller cannot lengthen the bound, only shorten it.
  EXPECT_EQ(Transport(std::chrono::minutes(10)).bound(), std::chrono::seconds(15));
  EXPECT_EQ(Transport(std::chrono::milliseconds(0)).bound(), std::chrono::milliseconds(1));
}

TEST_F(ProxyExecutionsTransportTest, AnExchangePastItsBoundFailsInsteadOfWaiting) {
  // The route answers only after the test releases it; the transport gives up
  // at its bound and reports a failed exchange (status 0), which
  // reconciliation reschedules rather than waiting.
  auto transport = Transport(std::chrono::milliseconds(200));
  const NyxidReply reply = transport.Submit("tool:v1:operation:slow", {});
  EXPECT_EQ(reply.status, 0);
}

TEST(ProviderOperationId, AcceptsOnlyTheExecutorsShape) {
  EXPECT_TRUE(IsValidProviderOperationId("op_a"));
  EXPECT_TRUE(IsValidProviderOperationId("op_k3v9abc0123456789"));
  EXPECT_TRUE(IsValidProviderOperationId("op_" + std::string(64, 'z')));
  EXPECT_FALSE(IsValidProviderOperationId("op_" + std::string(65, 'z')));
  EXPECT_FALSE(IsValidProviderOperationId(""));
  EXPECT_FALSE(IsValidProviderOperationId("op_"));
  EXPECT_FALSE(IsValidProviderOperationId("op_ABC"));
  EXPECT_FALSE(IsValidProviderOperationId("op-abc"));
  EXPECT_FALSE(IsValidProviderOperationId("op_a.b"));
  EXPECT_FALSE(IsValidProviderOperationId("op_a%2F"));
  EXPECT_FALSE(IsValidProviderOperationId(std::string("op_a\0b", 6)));
}

}  // namespace
}  // namespace aevatar::orchestrator
