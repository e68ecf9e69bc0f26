#include "http/server.h"

// Concurrency and lifecycle: slow handlers, the handler bound, timeouts, Stop().

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
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
using testing::StartOrDie;
using testing::Url;

// A handler blocked until `release` opens: 200 when the test released it, 504
// when the hang guard ran out first (so a test that never got to release it
// sees a failure, not a late success).
Response HeldUntil(const std::shared_ptr<Gate>& release) {
  return JsonResponse(release->WaitFor(kHangGuard) ? 200 : 504, R"({"done":true})");
}

// Opens its gate when destroyed: shows when whatever owned it let go of it.
class OpensGateOnRelease {
 public:
  explicit OpensGateOnRelease(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  ~OpensGateOnRelease() { gate_->Open(); }
  OpensGateOnRelease(const OpensGateOnRelease&) = delete;
  OpensGateOnRelease& operator=(const OpensGateOnRelease&) = delete;

 private:
  std::shared_ptr<Gate> gate_;
};

TEST(HttpServer, SlowHandlerDoesNotBlockOthers) {
  auto slow_started = std::make_shared<Gate>();
  auto release = std::make_shared<Gate>();
  auto server = StartOrDie([slow_started, release](Request& request) {
    if (request.path != "/slow") return JsonResponse(200, "{}");
    slow_started->Open();
    return HeldUntil(release);
  });
  auto slow = std::async(std::launch::async, [&] { return Get(*server, "/slow").status; });
  ASSERT_TRUE(slow_started->WaitFor(kHangGuard));
  // Every fast request is answered while the slow handler is still blocked:
  // none waited behind it (one that did would still be waiting).
  std::vector<std::future<int>> fast;
  for (int i = 0; i < 20; ++i) {
    fast.push_back(std::async(std::launch::async, [&] { return Get(*server, "/fast").status; }));
  }
  for (auto& each : fast) EXPECT_EQ(each.get(), 200);
  EXPECT_EQ(slow.wait_for(seconds(0)), std::future_status::timeout);
  release->Open();
  EXPECT_EQ(slow.get(), 200);
}

TEST(HttpServer, PastMaxConcurrentHandlersAnswers503AtOnce) {
  auto release = std::make_shared<Gate>();
  auto started = std::make_shared<Gate>();
  ServerOptions options;
  options.max_concurrent_handlers = 1;
  auto server = StartOrDie(
      [release, started](Request&) {
        started->Open();
        return HeldUntil(release);
      },
      options);
  auto held = std::async(std::launch::async, [&] { return Get(*server, "/").status; });
  ASSERT_TRUE(started->WaitFor(kHangGuard));
  ClientResponse busy = Get(*server, "/");
  // Answered while the only handler is still held: the request never queued.
  EXPECT_EQ(held.wait_for(seconds(0)), std::future_status::timeout);
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.headers.Get("Retry-After"), "1");
  EXPECT_EQ(nlohmann::json::parse(busy.body, nullptr, false).value("code", ""), "SERVER_BUSY");
  release->Open();
  EXPECT_EQ(held.get(), 200);
  // The slot is free once the handler's thread has finished with the
  // exchange, which may be just after the client read the answer.
  EXPECT_TRUE(PollUntil([&] { return Get(*server, "/").status == 200; }));
}

TEST(HttpServer, StopIsPromptDespiteABlockedHandlerAndIdleConnections) {
  auto release = std::make_shared<Gate>();
  auto started = std::make_shared<Gate>();
  auto finished = std::make_shared<Gate>();
  auto server = StartOrDie([release, started, finished](Request&) {
    started->Open();
    Response response = HeldUntil(release);
    finished->Open();
    return response;
  });
  uint16_t port = server->port();
  RawConnection idle(port);
  ASSERT_TRUE(idle.connected());
  auto in_flight = std::async(std::launch::async, [url = Url(*server, "/")] {
    ClientRequest request;
    request.url = url;
    request.timeout = kHangGuard;
    return Fetch(request).status();
  });
  ASSERT_TRUE(started->WaitFor(kHangGuard));

  server->Stop(/*grace_secs=*/1);
  // Stop returned past its grace while the handler is still blocked: it did
  // not wait for it.
  EXPECT_FALSE(finished->is_open());
  EXPECT_TRUE(idle.PeerClosed(kHangGuard));
  EXPECT_EQ(in_flight.get().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(RawConnection(port).connected());
  server->Stop();  // idempotent
  server.reset();
  release->Open();  // let the detached handler end now rather than at the guard
}

TEST(HttpServer, HandlerFinishingAfterTheServerIsGoneIsHarmless) {
  auto release = std::make_shared<Gate>();
  auto started = std::make_shared<Gate>();
  auto finished = std::make_shared<Gate>();
  auto released = std::make_shared<Gate>();
  // Owned by the handler, so by the server state the handler thread keeps alive.
  auto owned = std::make_shared<OpensGateOnRelease>(released);
  auto server = StartOrDie([release, started, finished, owned](Request&) {
    started->Open();
    Response response = HeldUntil(release);
    finished->Open();
    return response;
  });
  owned.reset();
  auto in_flight = std::async(std::launch::async, [url = Url(*server, "/")] {
    ClientRequest request;
    request.url = url;
    return Fetch(request).status();
  });
  ASSERT_TRUE(started->WaitFor(kHangGuard));
  server->Stop(/*grace_secs=*/0);
  server.reset();
  EXPECT_FALSE(in_flight.get().ok());
  // The server is gone, but the state its running handler needs is not.
  EXPECT_FALSE(released->is_open());
  release->Open();  // the detached handler now returns into a stopped server
  ASSERT_TRUE(finished->WaitFor(kHangGuard));
  // Once it has unwound, everything it held is freed: nothing leaks.
  EXPECT_TRUE(released->WaitFor(kHangGuard));
}

TEST(HttpServer, StreamWriterFailsOnceTheServerStops) {
  auto streaming = std::make_shared<Gate>();
  auto writer_failed = std::make_shared<Gate>();
  auto server = StartOrDie([streaming, writer_failed](Request&) {
    Response response;
    response.stream = [streaming, writer_failed](const ChunkWriter& write) {
      while (write("data: tick\n\n")) {
        streaming->Open();
        std::this_thread::sleep_for(milliseconds(20));
      }
      writer_failed->Open();
    };
    return response;
  });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(streaming->WaitFor(kHangGuard));
  server->Stop(/*grace_secs=*/0);
  EXPECT_TRUE(writer_failed->WaitFor(kHangGuard));
  server.reset();
}

TEST(HttpServer, UnfinishedHeaderClosesAfterTheHeaderTimeout) {
  ServerOptions options;
  options.header_timeout = seconds(1);
  options.idle_timeout = minutes(10);  // so only the header deadline can close it
  options.body_timeout = minutes(10);
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "{}"); }, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\n"));  // never finished
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServer, StopWaitsForAnInFlightHandlerWithinTheGrace) {
  auto started = std::make_shared<Gate>();
  auto release = std::make_shared<Gate>();
  auto server = StartOrDie([started, release](Request&) {
    started->Open();
    return HeldUntil(release);
  });
  const uint16_t port = server->port();
  auto in_flight = std::async(std::launch::async, [&] { return Get(*server, "/").status; });
  ASSERT_TRUE(started->WaitFor(kHangGuard));
  auto stopping = std::async(std::launch::async, [&] {
    server->Stop(/*grace_secs=*/static_cast<int>(kHangGuard.count()));
  });
  // The listener closes first; Stop then waits for the handler, which is
  // released only now, so it was in flight all through Stop.
  ASSERT_TRUE(PollUntil([port] { return !RawConnection(port).connected(); }));
  EXPECT_EQ(stopping.wait_for(seconds(0)), std::future_status::timeout);
  release->Open();
  stopping.get();
  EXPECT_EQ(in_flight.get(), 200);
}

}  // namespace
}  // namespace aevatar::http
