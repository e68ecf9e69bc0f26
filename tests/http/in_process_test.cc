#include "http/in_process.h"

// A server started with serve_in_process answers this process's Fetch without
// TCP (no connection is ever open while its handler runs), and what its
// handler sees and its caller gets are what the same exchange over TCP gives:
// the parsed request, the server's limits and problems, the client's deadline
// and body limit, streamed bodies, and a stopped server's closed listener.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http/connection_pool.h"
#include "http/opened_exchange.h"
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

// Requests of several shapes to `server`: a POST with a body and fields the
// client must not write as given, an empty PATCH and OPTIONS, a pooled GET,
// a HEAD, and a field the wire's parser trims.
std::vector<ClientRequest> ShapesFor(const Server& server) {
  std::vector<ClientRequest> shapes(6);
  for (ClientRequest& request : shapes) request.url = Url(server, "/echo/a%20b?x=1&y=%2F");
  shapes[0].method = "POST";
  shapes[0].headers.Add("X-Custom", "one");
  shapes[0].headers.Add("X-Custom", "two");
  shapes[0].headers.Add("X-Forged", "a\r\nX-Injected: yes");  // unsafe: never written
  shapes[0].headers.Add("Transfer-Encoding", "gzip");         // framing: the client's own
  shapes[0].body = R"({"k":"v"})";
  shapes[1].method = "PATCH";
  shapes[2].method = "OPTIONS";
  shapes[3].pool = std::make_shared<ConnectionPool>();
  shapes[4].method = "HEAD";
  shapes[5].headers.Add("X-Padded", "  \tvalue \t ");
  return shapes;
}

// What `response` says of the request its handler saw, and of itself.
nlohmann::json WhatWasSeen(const ClientResponse& response) {
  nlohmann::json request = nlohmann::json::parse(response.body, nullptr, false);
  nlohmann::json own = nlohmann::json::array();
  for (const auto& [name, value] : response.headers.fields()) own.push_back({name, value});
  return {{"status", response.status}, {"request", request}, {"headers", own}};
}

TEST(HttpInProcess, TheHandlerSeesTheRequestTCPWouldGiveItWithNoConnectionOpen) {
  Started tcp = StartEcho(false);
  Started local = StartEcho(true);
  const std::vector<ClientRequest> over_tcp = ShapesFor(*tcp.server);
  const std::vector<ClientRequest> in_process = ShapesFor(*local.server);
  const std::string tcp_host = "127.0.0.1:" + std::to_string(tcp.server->port());
  const std::string local_host = "127.0.0.1:" + std::to_string(local.server->port());
  for (size_t i = 0; i < over_tcp.size(); ++i) {
    absl::StatusOr<ClientResponse> a = Fetch(over_tcp[i]);
    absl::StatusOr<ClientResponse> b = Fetch(in_process[i]);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_GE(tcp.seen->open_connections, 1);    // the last one may still be closing
    EXPECT_EQ(local.seen->open_connections, 0);  // no TCP connection served it
    // The same, but for the Host field's port.
    std::string seen_tcp = WhatWasSeen(*a).dump();
    const std::string seen_local = WhatWasSeen(*b).dump();
    for (size_t at; (at = seen_tcp.find(tcp_host)) != std::string::npos;) {
      seen_tcp.replace(at, tcp_host.size(), local_host);
    }
    EXPECT_EQ(seen_tcp, seen_local) << over_tcp[i].method;
  }
  absl::StatusOr<ClientResponse> post = Fetch(in_process[0]);
  ASSERT_TRUE(post.ok());
  nlohmann::json request = nlohmann::json::parse(post->body);
  EXPECT_EQ(request["path"], "/echo/a b");
  EXPECT_EQ(request["remote_address"], "127.0.0.1");
  EXPECT_EQ(request["headers"].dump().find("Injected"), std::string::npos);
  EXPECT_EQ(request["headers"].dump().find("gzip"), std::string::npos);
}

TEST(HttpInProcess, WhatTheWiresParserRefusesIsRefusedAlike) {
  Started tcp = StartEcho(false);
  Started local = StartEcho(true);
  const std::vector<std::pair<std::string, std::string>> fields = {{"Bad Name", "v"},
                                                                   {"X-Control",
                                                                    "a\x01"
                                                                    "b"}};
  for (const auto& [name, value] : fields) {
    for (Server* server : {tcp.server.get(), local.server.get()}) {
      ClientRequest request;
      request.url = Url(*server, "/");
      request.headers.Add(name, value);
      ClientResponse response = testing::MustFetch(request);
      EXPECT_EQ(response.status, 400) << name;
      nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
      EXPECT_EQ(body.value("code", ""), "MALFORMED_REQUEST") << name;
    }
  }
  EXPECT_EQ(local.seen->open_connections, -1);  // its handler never ran
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
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return entered->load() == 1; }));

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

// A handler that streams 4 KiB chunks until a write is refused, then sets
// `refused`.
Handler Endless(std::shared_ptr<std::atomic<bool>> refused) {
  return [refused](Request&) {
    Response response;
    response.stream = [refused](const ChunkWriter& write) {
      while (write(std::string(4096, 'e'))) {
      }
      *refused = true;
    };
    return response;
  };
}

TEST(HttpInProcess, TheDeadlineEndsABodyThatKeepsComingFasterThanItIsRead) {
  auto refused = std::make_shared<std::atomic<bool>>(false);
  ServerOptions options;
  options.serve_in_process = true;
  std::unique_ptr<Server> server = StartOrDie(Endless(refused), options);
  ClientRequest request;
  request.url = Url(*server, "/");
  request.timeout = milliseconds(300);
  request.max_response_bytes = size_t{1} << 40;
  absl::StatusOr<ClientResponse> response = FetchStreaming(request, nullptr, [](std::string_view) {
    std::this_thread::sleep_for(milliseconds(5));  // slower than the handler
    return true;
  });
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded) << response.status();
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return refused->load(); }));
}

TEST(HttpInProcess, AStopPastItsGraceEndsTheExchangesStillInFlight) {
  auto refused = std::make_shared<std::atomic<bool>>(false);
  auto gate = std::make_shared<Gate>();
  auto entered = std::make_shared<std::atomic<int>>(0);
  ServerOptions options;
  options.serve_in_process = true;
  Handler endless = Endless(refused);
  std::unique_ptr<Server> server = StartOrDie(
      [endless, gate, entered](Request& request) {
        ++*entered;
        if (request.path == "/stream") return endless(request);
        gate->WaitFor(kHangGuard);  // a long run
        return JsonResponse(200, "{}");
      },
      options);
  absl::StatusOr<ClientResponse> streamed;
  absl::StatusOr<ClientResponse> waiting;
  std::thread reader([&] {
    ClientRequest request;
    request.url = Url(*server, "/stream");
    request.max_response_bytes = size_t{1} << 40;
    streamed = FetchStreaming(request, nullptr, [](std::string_view) {
      std::this_thread::sleep_for(milliseconds(1));
      return true;
    });
  });
  std::thread waiter([&] {
    ClientRequest request;
    request.url = Url(*server, "/run");
    waiting = Fetch(request);
  });
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return entered->load() == 2; }));
  server->Stop(0);
  reader.join();
  waiter.join();
  EXPECT_EQ(streamed.status().code(), absl::StatusCode::kUnavailable) << streamed.status();
  EXPECT_EQ(waiting.status().code(), absl::StatusCode::kUnavailable) << waiting.status();
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return refused->load(); }));
  gate->Open();
}

// OpenExchange hands the body to a caller that reads it later, on its own
// thread: a body the handler finished is read whole past the deadline (the
// exchange is over; a proxy may be passing it on to a slow client), and a
// Stop does not wait for that reading.
TEST(HttpInProcess, AnOpenedBodyTheHandlerFinishedIsReadWholeLaterAndAStopDoesNotWaitForIt) {
  ServerOptions options;
  options.serve_in_process = true;
  std::unique_ptr<Server> server = StartOrDie(
      Streaming({"one ", "two ", "three"}, false, std::make_shared<std::atomic<bool>>(false)),
      options);
  ClientRequest request;
  request.url = Url(*server, "/");
  request.timeout = milliseconds(200);
  absl::StatusOr<OpenedExchange> opened = OpenExchange(request, /*queue_limit=*/1 << 20);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->head.status, 200);
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server->Stop(/*grace_secs=*/60);
    stopped = true;
  });
  EXPECT_TRUE(::aevatar::testing::PollUntil([&] { return stopped.load(); }))
      << "Stop waited for a reader of a finished body";
  std::this_thread::sleep_for(milliseconds(300));  // past the request's deadline
  std::string body;
  while (true) {
    absl::StatusOr<std::optional<std::string>> chunk = opened->body->Next();
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    if (!*chunk) break;
    body += **chunk;
  }
  EXPECT_EQ(body, "one two three");
  stopper.join();
}

TEST(HttpInProcess, ADeclaredLengthPastTheCallersLimitFailsBeforeItsHeadersAreSeen) {
  ServerOptions options;
  options.serve_in_process = true;
  std::unique_ptr<Server> server =
      StartOrDie([](Request&) { return JsonResponse(200, std::string(2048, ' ')); }, options);
  ClientRequest request;
  request.url = Url(*server, "/");
  request.max_response_bytes = 1024;
  bool headers_seen = false;
  absl::StatusOr<ClientResponse> response = FetchStreaming(
      request, [&](const ClientResponse&) { headers_seen = true; },
      [](std::string_view) { return true; });
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted) << response.status();
  EXPECT_FALSE(headers_seen);
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
