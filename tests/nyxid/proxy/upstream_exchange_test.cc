#include "nyxid/proxy/upstream_exchange.h"

// The proxy's exchange with an upstream, over TCP and with an upstream served
// in this process (which reads its body with no thread of its own): small
// bodies answered whole, large ones and event streams streamed, a body that
// breaks never passed off as complete, the proxy deadline, and an unsent
// response stopping the upstream.

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/api_error.h"
#include "gtest/gtest.h"
#include "http/server.h"
#include "http_test_util.h"
#include "testing/poll.h"

namespace aevatar::nyxid {
namespace {

using ::aevatar::testing::kHangGuard;
using http::testing::Gate;
using http::testing::StartOrDie;

// What an upstream handler did: whether a write of its stream was refused
// (nobody reads any more).
struct Upstream {
  std::atomic<bool> write_refused{false};
};

// An upstream whose answer streams `chunks`, waiting for `gate` (when given)
// before the chunk at `gate_before`, and throwing at the end when `fail`.
http::Handler Streams(std::vector<std::string> chunks, std::string type, bool fail,
                      std::shared_ptr<Upstream> seen, std::shared_ptr<Gate> gate = nullptr,
                      size_t gate_before = 0) {
  return [=](http::Request&) {
    http::Response response;
    response.headers.Set("Content-Type", type);
    response.stream = [=](const http::ChunkWriter& write) {
      for (size_t i = 0; i < chunks.size(); ++i) {
        if (gate != nullptr && i == gate_before) gate->WaitFor(kHangGuard);
        if (!write(chunks[i])) {
          seen->write_refused = true;
          return;
        }
      }
      if (fail) throw std::runtime_error("the upstream's stream broke");
    };
    return response;
  };
}

// Everything a streamed response's body writes.
std::string Drain(const http::Response& response) {
  std::string body;
  response.stream([&body](std::string_view chunk) {
    body.append(chunk);
    return true;
  });
  return body;
}

class ProxyExchangeTest : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<http::Server> Start(http::Handler handler) {
    http::ServerOptions options;
    options.serve_in_process = GetParam();
    return StartOrDie(std::move(handler), options);
  }
  static http::ClientRequest To(const http::Server& server) {
    http::ClientRequest request;
    request.url = http::testing::Url(server, "/");
    return request;
  }
};

TEST_P(ProxyExchangeTest, ABodyWithinTheBufferIsAnsweredWholeAndALargerOneStreamsInOrder) {
  auto seen = std::make_shared<Upstream>();
  const std::vector<std::string> small(3, std::string(60 << 10, 's'));
  const std::vector<std::string> large{std::string(200 << 10, 'a'), std::string(200 << 10, 'b'),
                                       std::string(10, 'c')};
  std::unique_ptr<http::Server> small_upstream = Start(Streams(small, "text/plain", false, seen));
  std::unique_ptr<http::Server> large_upstream = Start(Streams(large, "text/plain", false, seen));

  absl::StatusOr<http::Response> whole = ProxyExchange(To(*small_upstream));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->status, 200);
  EXPECT_FALSE(whole->stream);
  EXPECT_EQ(whole->body, small[0] + small[1] + small[2]);
  EXPECT_EQ(whole->headers.Get("Content-Type"), "text/plain");

  absl::StatusOr<http::Response> streamed = ProxyExchange(To(*large_upstream));
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(streamed->stream);
  EXPECT_TRUE(streamed->body.empty());
  EXPECT_EQ(Drain(*streamed), large[0] + large[1] + large[2]);
  EXPECT_FALSE(seen->write_refused);
}

TEST_P(ProxyExchangeTest, AnEventStreamIsAnsweredAtItsFirstEventNotAtItsEnd) {
  auto seen = std::make_shared<Upstream>();
  auto later_events = std::make_shared<Gate>();
  std::unique_ptr<http::Server> upstream =
      Start(Streams({"data: 1\n\n", "data: 2\n\n"}, "text/event-stream", false, seen, later_events,
                    /*gate_before=*/1));
  absl::StatusOr<http::Response> response = ProxyExchange(To(*upstream));
  // Answered while the upstream still waits to send its second event.
  EXPECT_FALSE(later_events->is_open());
  later_events->Open();
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_TRUE(response->stream);
  EXPECT_EQ(Drain(*response), "data: 1\n\ndata: 2\n\n");
}

TEST_P(ProxyExchangeTest, ABodyThatBreaksIsATyped502BeforeTheAnswerAndACutStreamAfter) {
  auto seen = std::make_shared<Upstream>();
  std::unique_ptr<http::Server> upstream = Start(Streams({"part"}, "text/plain", true, seen));

  absl::StatusOr<http::Response> before = ProxyExchange(To(*upstream));
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(base::HttpStatusFor(before.status()), 502);
  EXPECT_EQ(base::ApiCode(before.status()), "UPSTREAM_UNREACHABLE");

  absl::StatusOr<http::Response> after = ProxyExchange(To(*upstream), {.buffer_limit = 0});
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(after->stream);
  std::string received;
  EXPECT_THROW(after->stream([&received](std::string_view chunk) {
    received.append(chunk);
    return true;
  }),
               std::runtime_error);
  EXPECT_EQ(received, "part");
}

TEST_P(ProxyExchangeTest, AnUpstreamSlowerThanTheDeadlineIsA504) {
  auto seen = std::make_shared<Upstream>();
  auto release = std::make_shared<Gate>();
  std::unique_ptr<http::Server> upstream =
      Start(Streams({"late"}, "text/plain", false, seen, release, /*gate_before=*/0));
  http::ClientRequest request = To(*upstream);
  request.timeout = std::chrono::milliseconds(300);
  absl::StatusOr<http::Response> response = ProxyExchange(request);
  release->Open();
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(base::HttpStatusFor(response.status()), 504);
  EXPECT_EQ(base::ApiCode(response.status()), "PROXY_DEADLINE_EXCEEDED");
}

TEST_P(ProxyExchangeTest, AStreamedResponseDroppedUnsentStopsTheUpstream) {
  auto seen = std::make_shared<Upstream>();
  // More than the buffers between the two hold, so the upstream meets the
  // departure at a write.
  std::unique_ptr<http::Server> upstream = Start(
      Streams(std::vector<std::string>(64, std::string(64 << 10, 'z')), "text/plain", false, seen));
  {
    absl::StatusOr<http::Response> response = ProxyExchange(To(*upstream));
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_TRUE(response->stream);
  }
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return seen->write_refused.load(); }));
}

TEST_P(ProxyExchangeTest, NotModifiedAndHeadCarryNoBody) {
  std::unique_ptr<http::Server> upstream = Start([](http::Request& request) {
    http::Response response;
    response.status = request.path == "/cached" ? 304 : 200;
    response.headers.Set("ETag", "\"v1\"");
    response.body = request.path == "/cached" ? "" : "a body";
    return response;
  });
  http::ClientRequest cached = To(*upstream);
  cached.url = http::testing::Url(*upstream, "/cached");
  absl::StatusOr<http::Response> not_modified = ProxyExchange(cached);
  ASSERT_TRUE(not_modified.ok()) << not_modified.status();
  EXPECT_EQ(not_modified->status, 304);
  EXPECT_FALSE(not_modified->stream);
  EXPECT_EQ(not_modified->headers.Get("ETag"), "\"v1\"");

  http::ClientRequest head = To(*upstream);
  head.method = "HEAD";
  absl::StatusOr<http::Response> headed = ProxyExchange(head);
  ASSERT_TRUE(headed.ok()) << headed.status();
  EXPECT_EQ(headed->status, 200);
  EXPECT_FALSE(headed->stream);
  EXPECT_TRUE(headed->body.empty());
}

INSTANTIATE_TEST_SUITE_P(Upstreams, ProxyExchangeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "InProcess" : "OverTcp";
                         });

}  // namespace
}  // namespace aevatar::nyxid
