#include "http/server.h"

// Concurrency and lifecycle: slow handlers, the handler bound, timeouts, Stop().

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"

namespace aevatar::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
using testing::Gate;
using testing::Get;
using testing::MustFetch;
using testing::RawConnection;
using testing::StartOrDie;
using testing::Url;

TEST(HttpServer, SlowHandlerDoesNotBlockOthers) {
  auto slow_started = std::make_shared<Gate>();
  auto server = StartOrDie([slow_started](Request& request) {
    if (request.path == "/slow") {
      slow_started->Open();
      std::this_thread::sleep_for(seconds(3));
    }
    return JsonResponse(200, "{}");
  });
  auto slow = std::async(std::launch::async, [&] { return Get(*server, "/slow").status; });
  ASSERT_TRUE(slow_started->WaitFor(seconds(5)));

  std::vector<std::future<milliseconds>> fast;
  for (int i = 0; i < 20; ++i) {
    fast.push_back(std::async(std::launch::async, [&] {
      auto start = Clock::now();
      EXPECT_EQ(Get(*server, "/fast").status, 200);
      return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    }));
  }
  for (auto& each : fast) EXPECT_LT(each.get(), seconds(1));
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
        release->WaitFor(seconds(10));
        return JsonResponse(200, "{}");
      },
      options);
  auto held = std::async(std::launch::async, [&] { return Get(*server, "/").status; });
  ASSERT_TRUE(started->WaitFor(seconds(5)));
  auto start = Clock::now();
  ClientResponse busy = Get(*server, "/");
  EXPECT_LT(Clock::now() - start, seconds(1));
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.headers.Get("Retry-After"), "1");
  EXPECT_EQ(nlohmann::json::parse(busy.body)["code"], "SERVER_BUSY");
  release->Open();
  EXPECT_EQ(held.get(), 200);
  EXPECT_EQ(Get(*server, "/").status, 200);  // the thread is reused once free
}

TEST(HttpServer, StopIsPromptDespiteABlockedHandlerAndIdleConnections) {
  auto release = std::make_shared<Gate>();
  auto started = std::make_shared<Gate>();
  auto server = StartOrDie([release, started](Request&) {
    started->Open();
    release->WaitFor(seconds(30));
    return JsonResponse(200, "{}");
  });
  uint16_t port = server->port();
  RawConnection idle(port);
  ASSERT_TRUE(idle.connected());
  auto in_flight = std::async(std::launch::async, [url = Url(*server, "/")] {
    ClientRequest request;
    request.url = url;
    request.timeout = seconds(20);
    return Fetch(request).status();
  });
  ASSERT_TRUE(started->WaitFor(seconds(5)));

  auto start = Clock::now();
  server->Stop(/*grace_secs=*/1);
  EXPECT_LT(Clock::now() - start, seconds(3));
  EXPECT_TRUE(idle.PeerClosed(seconds(1)));
  EXPECT_EQ(in_flight.get().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(RawConnection(port).connected());
  server->Stop();  // idempotent
  server.reset();
}

TEST(HttpServer, HandlerFinishingAfterTheServerIsGoneIsHarmless) {
  auto release = std::make_shared<Gate>();
  auto started = std::make_shared<Gate>();
  auto finished = std::make_shared<Gate>();
  auto server = StartOrDie([release, started, finished](Request&) {
    started->Open();
    release->WaitFor(seconds(30));
    finished->Open();
    return JsonResponse(200, "{}");
  });
  auto in_flight = std::async(std::launch::async, [url = Url(*server, "/")] {
    ClientRequest request;
    request.url = url;
    return Fetch(request).status();
  });
  ASSERT_TRUE(started->WaitFor(seconds(5)));
  server->Stop(/*grace_secs=*/0);
  server.reset();
  EXPECT_FALSE(in_flight.get().ok());
  release->Open();  // the detached handler now returns into a stopped server
  ASSERT_TRUE(finished->WaitFor(seconds(5)));
  std::this_thread::sleep_for(milliseconds(200));  // let it unwind and free the I/O state
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
  ASSERT_TRUE(streaming->WaitFor(seconds(5)));
  server->Stop(/*grace_secs=*/0);
  EXPECT_TRUE(writer_failed->WaitFor(seconds(5)));
  server.reset();
}

TEST(HttpServer, UnfinishedHeaderClosesAfterTheHeaderTimeout) {
  ServerOptions options;
  options.header_timeout = seconds(1);
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "{}"); }, options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\n"));  // never finished
  EXPECT_TRUE(connection.PeerClosed(seconds(3)));
}

TEST(HttpServer, StopWaitsForAnInFlightHandlerWithinTheGrace) {
  auto started = std::make_shared<Gate>();
  auto server = StartOrDie([started](Request&) {
    started->Open();
    std::this_thread::sleep_for(milliseconds(300));
    return JsonResponse(200, R"({"done":true})");
  });
  auto in_flight = std::async(std::launch::async, [&] { return Get(*server, "/").status; });
  ASSERT_TRUE(started->WaitFor(seconds(5)));
  server->Stop(/*grace_secs=*/5);
  EXPECT_EQ(in_flight.get(), 200);
}

}  // namespace
}  // namespace aevatar::http
