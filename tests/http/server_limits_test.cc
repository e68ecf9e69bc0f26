#include "http/server.h"

// The server's limits against abusive clients: oversized request lines,
// headers and bodies, slow and idle connections, and the connection cap.
// Timeouts are shortened through ServerOptions so nothing waits for minutes.

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http/connection_limit.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "testing/poll.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::kHangGuard;
using ::aevatar::testing::PollUntil;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::Gate;
using testing::Get;
using testing::RawConnection;
using testing::RawResponse;
using testing::StartOrDie;

Response Ok(Request&) { return JsonResponse(200, "{}"); }

// Sends `bytes` one at a time, `interval` apart (each well within any
// per-read timeout). Returns true once the server has closed the connection,
// false if it was still open after the last byte.
bool TrickleUntilClosed(RawConnection& connection, const std::string& bytes,
                        milliseconds interval) {
  for (char byte : bytes) {
    if (!connection.Send(std::string(1, byte)) || connection.PeerClosed(interval)) return true;
  }
  return false;
}

// Polls `server.open_connections()` until it equals `want`; false after the
// hang guard.
bool OpenConnectionsReach(const Server& server, int want) {
  return PollUntil([&] { return server.open_connections() == want; });
}

std::string CodeOf(const RawResponse& response) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  return body.is_object() ? body.value("code", "") : "";
}

// The peak address space of this process in KiB (VmPeak: touched or not).
long VmPeakKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmPeak:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}

TEST(HttpServerLimits, LongRequestLineIs414AndCloses) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET /" + std::string(4096, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 414);
  EXPECT_EQ(response->Header("Content-Type"), "application/problem+json");
  EXPECT_EQ(CodeOf(*response), "URI_TOO_LONG");
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServerLimits, LargeHeaderFieldsAre431AndClose) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  auto server = StartOrDie(Ok, options);
  {
    RawConnection small(server->port());  // just under the limit is served
    ASSERT_TRUE(
        small.Send("GET / HTTP/1.1\r\nHost: t\r\nX-Pad: " + std::string(900, 'p') + "\r\n\r\n"));
    auto response = small.Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 200);
  }
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\nX-Pad: " + std::string(2048, 'p') +
                              "\r\n\r\n"));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(CodeOf(*response), "HEADERS_TOO_LARGE");
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServerLimits, DeclaredBodyOverTheLimitIs413BeforeAnyBodyByte) {
  std::atomic<int> calls{0};
  ServerOptions options;
  options.max_body_bytes = 1 << 20;
  auto server = StartOrDie(
      [&calls](Request&) {
        ++calls;
        return JsonResponse(200, "{}");
      },
      options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 104857600\r\n\r\n"));
  auto response = connection.Read();  // no body sent: the answer cannot wait for one
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(CodeOf(*response), "BODY_TOO_LARGE");
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServerLimits, ChunkedBodyOverTheLimitIs413) {
  ServerOptions options;
  options.max_body_bytes = 64 << 10;
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  std::string request = "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 8; ++i) request += "4000\r\n" + std::string(0x4000, 'b') + "\r\n";
  request += "0\r\n\r\n";
  ASSERT_TRUE(connection.Send(request));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(CodeOf(*response), "BODY_TOO_LARGE");
}

TEST(HttpServerLimits, MemoryFollowsTheBodyReceivedNotTheLengthDeclared) {
  ServerOptions options;
  options.max_body_bytes = 16 << 20;
  options.body_timeout = seconds(1);  // each connection then ends, after its body read began
  auto server = StartOrDie(Ok, options);
  ASSERT_EQ(Get(*server, "/").status, 200);  // warm up the I/O threads' allocators
  const long before = VmPeakKib();
  constexpr int kConnections = 128;  // each declares 16 MiB: 2 GiB if reserved up front
  std::vector<std::unique_ptr<RawConnection>> connections;
  for (int i = 0; i < kConnections; ++i) {
    connections.push_back(std::make_unique<RawConnection>(server->port()));
    ASSERT_TRUE(connections.back()->Send(
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 16777216\r\n\r\nx"));
  }
  // All of them wait in the body phase together until the body deadline.
  for (auto& connection : connections) ASSERT_TRUE(connection->PeerClosed(kHangGuard));
  const long grown_kib = VmPeakKib() - before;
  EXPECT_LT(grown_kib, 512 << 10) << "peak address space grew by " << grown_kib << " KiB";
}

TEST(HttpServerLimits, HeaderDeadlineClosesATricklingClient) {
  ServerOptions options;
  options.header_timeout = milliseconds(300);
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  // Every byte arrives well within any per-read timeout; only a deadline on
  // the whole header block ends this.
  // The trickle takes at least 233 x 25 ms (5.8 s): far past the 300 ms
  // deadline, short of the 10 s default, so a close before its end is the
  // configured deadline's doing.
  std::string header = "GET / HTTP/1.1\r\nHost: t\r\nX-Slow: " + std::string(200, 's');
  EXPECT_TRUE(TrickleUntilClosed(connection, header, milliseconds(25)))
      << "still open after trickling the whole header";
  EXPECT_EQ(Get(*server, "/").status, 200);
}

TEST(HttpServerLimits, BodyDeadlineClosesATricklingBody) {
  ServerOptions options;
  options.body_timeout = milliseconds(300);
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 400\r\n\r\n"));
  EXPECT_TRUE(TrickleUntilClosed(connection, std::string(200, 'b'), milliseconds(25)))
      << "still open after trickling half the body";
}

TEST(HttpServerLimits, SilentNewConnectionClosesAtTheHeaderDeadline) {
  ServerOptions options;
  options.header_timeout = milliseconds(300);
  options.idle_timeout = minutes(10);  // so only the header deadline can close it
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.connected());
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServerLimits, IdleKeptAliveConnectionClosesAtTheIdleTimeout) {
  ServerOptions options;
  options.idle_timeout = milliseconds(300);
  options.header_timeout = minutes(10);  // so only the idle timeout can close it
  auto server = StartOrDie(Ok, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->Header("Connection"), std::nullopt);  // kept alive
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
  EXPECT_TRUE(OpenConnectionsReach(*server, 0));
}

TEST(HttpServerLimits, ConnectionsPastTheCapAre503AndClosed) {
  ServerOptions options;
  options.max_connections = 4;
  auto server = StartOrDie(Ok, options);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(server->port()));
    ASSERT_TRUE(held.back()->connected());
  }
  ASSERT_TRUE(OpenConnectionsReach(*server, 4));

  RawConnection shed(server->port());
  ASSERT_TRUE(shed.Send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto response = shed.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->Header("Retry-After"), "1");
  EXPECT_EQ(CodeOf(*response), "TOO_MANY_CONNECTIONS");
  EXPECT_TRUE(shed.PeerClosed(kHangGuard));
  EXPECT_EQ(server->open_connections(), 4);

  held.pop_back();  // one place frees up: a new connection is served again
  ASSERT_TRUE(OpenConnectionsReach(*server, 3));
  EXPECT_EQ(Get(*server, "/").status, 200);
  // The held connections were never disturbed.
  ASSERT_TRUE(held.front()->Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto served = held.front()->Read();
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
}

TEST(HttpServerLimits, ClientsVanishingMidExchangeLeaveNothingOpen) {
  auto release = std::make_shared<Gate>();
  ServerOptions options;
  options.max_connections = 64;  // above the 50 below: none is shed
  auto server = StartOrDie(
      [release](Request& request) {
        if (request.path == "/slow") release->WaitFor(kHangGuard);
        if (request.path == "/stream") {
          Response response;
          response.stream = [](const ChunkWriter& write) {
            while (write(std::string(64 << 10, 'x'))) {
            }
          };
          return response;
        }
        return JsonResponse(200, std::string(256 << 10, ' ') + "{}");
      },
      options);
  const uint16_t port = server->port();
  const std::vector<std::string> cut_off = {
      "GET / HTTP/1.1\r\nHo",                                           // mid-header
      "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nabc",  // mid-body
      "GET / HTTP/1.1\r\nHost: t\r\n\r\n",                              // mid-response
      "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n",                        // mid-stream
      "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n",                          // mid-handler
  };
  for (int round = 0; round < 10; ++round) {
    for (const std::string& request : cut_off) {
      RawConnection connection(port);
      ASSERT_TRUE(connection.Send(request));
    }  // closed here, without reading
  }
  release->Open();
  // Accepted after all of them, so once it is answered every one is counted.
  EXPECT_EQ(Get(*server, "/").status, 200);
  EXPECT_TRUE(OpenConnectionsReach(*server, 0)) << server->open_connections() << " still open";
}

TEST(ConnectionBudget, LeavesDescriptorsForEverythingElse) {
  EXPECT_EQ(ConnectionBudgetFor(1024), 768);        // a reserve of at least 256
  EXPECT_EQ(ConnectionBudgetFor(20000), 17500);     // or an eighth of the limit
  EXPECT_EQ(ConnectionBudgetFor(1 << 20), 917504);  // nr_open's default
  EXPECT_EQ(ConnectionBudgetFor(100), 1);           // never zero
}

TEST(ConnectionBudget, CapsEachServerOnItsOwn) {
  ConnectionLimit limit(2);
  auto first = limit.TryAcquire();
  auto second = limit.TryAcquire();
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_FALSE(limit.TryAcquire().has_value());
  EXPECT_EQ(limit.open(), 2);
  first.reset();
  EXPECT_EQ(limit.open(), 1);
  EXPECT_TRUE(limit.TryAcquire().has_value());  // released again at once
  EXPECT_EQ(limit.open(), 1);
}

}  // namespace
}  // namespace aevatar::http
