#include "http/in_process.h"

// A server started with serve_in_process answers this process's Fetch without
// TCP (no connection is ever open while its handler runs), and what its
// handler sees and its caller gets are what the same exchange over TCP gives:
// the parsed request, the server's limits and problems, the client's deadline
// and body limit, streamed bodies, and a stopped server's closed listener.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http/server.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "testing/loopback_listener.h"
#include "testing/poll.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::kHangGuard;
using std::chrono::milliseconds;
using testing::Gate;
using testing::StartOrDie;
using testing::Url;

// The server a handler runs in, set once it has started, and what the handler
// saw of it: how many TCP connections were open while it ran.
struct Seen {
  std::atomic<Server*> server{nullptr};
  std::atomic<int> open_connections{-1};
};

// Echoes the request as JSON and notes the server's open connections.
Handler EchoHandler(std::shared_ptr<Seen> seen) {
  return [seen](Request& request) {
    if (Server* server = seen->server.load()) seen->open_connections = server->open_connections();
    nlohmann::json headers = nlohmann::json::array();
    for (const auto& [name, value] : request.headers.fields()) headers.push_back({name, value});
    return JsonResponse(200, nlohmann::json{{"method", request.method},
                                            {"target", request.target},
                                            {"path", request.path},
                                            {"query", request.query},
                                            {"headers", headers},
                                            {"body", request.body},
                                            {"remote_address", request.remote_address}}
                                 .dump());
  };
}

struct Started {
  std::unique_ptr<Server> server;
  std::shared_ptr<Seen> seen;
};

Started StartEcho(bool in_process, ServerOptions options = {}) {
  auto seen = std::make_shared<Seen>();
  options.serve_in_process = in_process;
  std::unique_ptr<Server> server = StartOrDie(EchoHandler(seen), options);
  seen->server = server.get();
  return {std::move(server), seen};
}

ClientRequest EchoRequest(const Server& server) {
  ClientRequest request;
  request.method = "POST";
  request.url = Url(server, "/echo/a%20b?x=1&y=%2F");
  request.headers.Add("X-Custom", "one");
  request.headers.Add("X-Custom", "two");
  request.headers.Add("X-Forged", "a\r\nX-Injected: yes");  // unsafe: never written
  request.headers.Add("Transfer-Encoding", "gzip");         // framing: the client's own
  request.body = R"({"k":"v"})";
  return request;
}

TEST(HttpInProcess, TheHandlerSeesTheRequestTCPWouldGiveItWithNoConnectionOpen) {
  Started tcp = StartEcho(false);
  Started local = StartEcho(true);
  absl::StatusOr<ClientResponse> over_tcp = Fetch(EchoRequest(*tcp.server));
  absl::StatusOr<ClientResponse> in_process = Fetch(EchoRequest(*local.server));
  ASSERT_TRUE(over_tcp.ok()) << over_tcp.status();
  ASSERT_TRUE(in_process.ok()) << in_process.status();
  EXPECT_EQ(tcp.seen->open_connections, 1);
  EXPECT_EQ(local.seen->open_connections, 0);  // no TCP connection served it

  nlohmann::json a = nlohmann::json::parse(over_tcp->body);
  nlohmann::json b = nlohmann::json::parse(in_process->body);
  for (const char* field : {"method", "target", "path", "query", "body", "remote_address"}) {
    EXPECT_EQ(a[field], b[field]) << field;
  }
  EXPECT_EQ(b["path"], "/echo/a b");
  EXPECT_EQ(b["remote_address"], "127.0.0.1");
  // The same fields in the same order, but for Host, whose port differs.
  ASSERT_EQ(a["headers"].size(), b["headers"].size()) << a["headers"] << b["headers"];
  for (size_t i = 0; i < a["headers"].size(); ++i) {
    EXPECT_EQ(a["headers"][i][0], b["headers"][i][0]);
    if (a["headers"][i][0] != "Host") {
      EXPECT_EQ(a["headers"][i], b["headers"][i]);
    }
  }
  EXPECT_EQ(b["headers"].dump().find("Injected"), std::string::npos);
  EXPECT_EQ(b["headers"].dump().find("gzip"), std::string::npos);
  EXPECT_EQ(in_process->status, 200);
  EXPECT_EQ(in_process->headers.Get("Content-Length"), std::to_string(in_process->body.size()));
  EXPECT_EQ(in_process->headers.Get("Content-Type"), over_tcp->headers.Get("Content-Type"));
}

std::string CodeOf(const ClientResponse& response) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  return body.is_object() ? body.value("code", "") : "";
}

TEST(HttpInProcess, TheServersLimitsGiveTheirProblemsBeforeTheHandlerRuns) {
  ServerOptions options;
  options.max_body_bytes = 64;
  options.max_header_bytes = 512;
  Started local = StartEcho(true, options);

  ClientRequest big_body;
  big_body.method = "POST";
  big_body.url = Url(*local.server, "/");
  big_body.body = std::string(65, 'x');
  ClientRequest long_line;
  long_line.url = Url(*local.server, "/" + std::string(600, 'p'));
  ClientRequest big_header;
  big_header.url = Url(*local.server, "/");
  big_header.headers.Add("X-Big", std::string(600, 'h'));

  ClientResponse body = testing::MustFetch(big_body);
  EXPECT_EQ(body.status, 413);
  EXPECT_EQ(CodeOf(body), "BODY_TOO_LARGE");
  ClientResponse line = testing::MustFetch(long_line);
  EXPECT_EQ(line.status, 414);
  EXPECT_EQ(CodeOf(line), "URI_TOO_LONG");
  ClientResponse header = testing::MustFetch(big_header);
  EXPECT_EQ(header.status, 431);
  EXPECT_EQ(CodeOf(header), "HEADERS_TOO_LARGE");
  EXPECT_EQ(local.seen->open_connections, -1);  // the handler never ran
}

TEST(HttpInProcess, PastTheHandlerBoundARequestIsBusyAndADeadlineEndsTheWait) {
  auto gate = std::make_shared<Gate>();
  auto entered = std::make_shared<std::atomic<int>>(0);
  ServerOptions options;
  options.serve_in_process = true;
  options.max_concurrent_handlers = 1;
  std::unique_ptr<Server> server = StartOrDie(
      [gate, entered](Request&) {
        ++*entered;
        gate->WaitFor(kHangGuard);
        return JsonResponse(200, "{}");
      },
      options);

  ClientRequest slow;
  slow.url = Url(*server, "/");
  slow.timeout = milliseconds(200);
  absl::StatusOr<ClientResponse> timed_out = Fetch(slow);
  EXPECT_EQ(timed_out.status().code(), absl::StatusCode::kDeadlineExceeded) << timed_out.status();
  EXPECT_EQ(*entered, 1);

  // The first handler still holds the only slot.
  ClientResponse busy = testing::Get(*server, "/");
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(CodeOf(busy), "SERVER_BUSY");
  EXPECT_EQ(busy.headers.Get("Retry-After"), "1");
  gate->Open();
  EXPECT_TRUE(
      ::aevatar::testing::PollUntil([&] { return testing::Get(*server, "/").status == 200; }));
}

// A handler that streams `chunks`, then throws if `fail` is set; `ended`
// is set once its stream returns or throws.
Handler Streaming(std::vector<std::string> chunks, bool fail,
                  std::shared_ptr<std::atomic<bool>> writer_refused) {
  return [chunks, fail, writer_refused](Request&) {
    Response response;
    response.headers.Set("Content-Type", "text/event-stream");
    response.stream = [chunks, fail, writer_refused](const ChunkWriter& write) {
      for (const std::string& chunk : chunks) {
        if (!write(chunk)) {
          *writer_refused = true;
          return;
        }
      }
      if (fail) throw std::runtime_error("the stream broke");
    };
    return response;
  };
}

TEST(HttpInProcess, AStreamedBodyArrivesInOrderAndABrokenOneIsNeverComplete) {
  auto refused = std::make_shared<std::atomic<bool>>(false);
  ServerOptions options;
  options.serve_in_process = true;
  std::unique_ptr<Server> whole =
      StartOrDie(Streaming({"a", "", "bc", "d"}, false, refused), options);
  std::unique_ptr<Server> broken = StartOrDie(Streaming({"a"}, true, refused), options);

  ClientRequest request;
  request.url = Url(*whole, "/");
  std::vector<std::string> received;
  int headers_seen = 0;
  absl::StatusOr<ClientResponse> streamed = FetchStreaming(
      request,
      [&](const ClientResponse& head) {
        ++headers_seen;
        EXPECT_EQ(head.headers.Get("Transfer-Encoding"), "chunked");
        EXPECT_EQ(head.headers.Get("Content-Type"), "text/event-stream");
      },
      [&](std::string_view chunk) {
        received.emplace_back(chunk);
        return true;
      });
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(headers_seen, 1);
  EXPECT_EQ(received, (std::vector<std::string>{"a", "bc", "d"}));

  request.url = Url(*broken, "/");
  absl::StatusOr<ClientResponse> cut = Fetch(request);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kUnavailable) << cut.status();
  EXPECT_FALSE(*refused);
}

TEST(HttpInProcess, ABodyPastTheCallersLimitStopsTheHandlersWrites) {
  auto refused = std::make_shared<std::atomic<bool>>(false);
  ServerOptions options;
  options.serve_in_process = true;
  // More than the in-process buffer holds, so the handler must meet the
  // caller's departure at a write.
  std::vector<std::string> chunks(64, std::string(64 << 10, 'z'));
  std::unique_ptr<Server> server = StartOrDie(Streaming(chunks, false, refused), options);
  ClientRequest request;
  request.url = Url(*server, "/");
  request.max_response_bytes = 100 << 10;
  absl::StatusOr<ClientResponse> response = Fetch(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted) << response.status();
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return refused->load(); }));
}

TEST(HttpInProcess, HeadAndNotModifiedCarryNoBodyAndAThrowingHandlerIsA500) {
  ServerOptions options;
  options.serve_in_process = true;
  std::unique_ptr<Server> server = StartOrDie(
      [](Request& request) -> Response {
        if (request.path == "/throw") throw std::runtime_error("secret-in-the-message");
        Response response = JsonResponse(request.path == "/etag" ? 304 : 200, "{\"a\":1}");
        return response;
      },
      options);
  ClientRequest head;
  head.method = "HEAD";
  head.url = Url(*server, "/");
  ClientResponse headed = testing::MustFetch(head);
  EXPECT_EQ(headed.status, 200);
  EXPECT_EQ(headed.body, "");
  EXPECT_EQ(headed.headers.Get("Content-Length"), "7");

  ClientResponse not_modified = testing::Get(*server, "/etag");
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_EQ(not_modified.body, "");
  EXPECT_FALSE(not_modified.headers.Get("Content-Length"));

  ClientResponse threw = testing::Get(*server, "/throw");
  EXPECT_EQ(threw.status, 500);
  EXPECT_EQ(CodeOf(threw), "INTERNAL");
  EXPECT_EQ(threw.body.find("secret"), std::string::npos);
}

TEST(HttpInProcess, AStoppedServerIsReachedNoMoreAndAnAdoptedSocketIsServedOverTcp) {
  Started local = StartEcho(true);
  const std::string url = Url(*local.server, "/");
  local.server->Stop();
  ClientRequest request;
  request.url = url;
  absl::StatusOr<ClientResponse> after_stop = Fetch(request);
  EXPECT_EQ(after_stop.status().code(), absl::StatusCode::kUnavailable) << after_stop.status();

  // A given listening socket may be another network namespace's: never
  // served in process, whatever its address.
  uint16_t port = 0;
  ServerOptions options;
  options.listen_fd = ::aevatar::testing::ListenOnLoopback(16, port);
  ASSERT_GE(options.listen_fd, 0);
  Started adopted = StartEcho(true, options);
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  ClientResponse response = testing::MustFetch(request);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(adopted.seen->open_connections, 1);
}

}  // namespace
}  // namespace aevatar::http
