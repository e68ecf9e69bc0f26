#include "http/server.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "testing/poll.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::kHangGuard;
using std::chrono::milliseconds;
using testing::Gate;
using testing::Get;
using testing::MustFetch;
using testing::RawConnection;
using testing::StartOrDie;
using testing::Url;

TEST(HttpServer, JsonRoundTripSeesPathQueryHeadersAndPeer) {
  auto server = StartOrDie([](Request& request) {
    nlohmann::json in = nlohmann::json::parse(request.body);
    nlohmann::json out = {{"echo", in},
                          {"method", request.method},
                          {"path", request.path},
                          {"target", request.target},
                          {"wait", request.QueryParam("wait").value_or("")},
                          {"trace", request.headers.Get("x-trace").value_or("")},
                          {"peer", request.remote_address}};
    return JsonResponse(201, out.dump());
  });
  ClientRequest request;
  request.method = "POST";
  request.url = Url(*server, "/a%20b/c?wait=30&z=1");
  request.headers.Add("Content-Type", "application/json");
  request.headers.Add("X-Trace", "t-1");
  request.body = R"json({"language":"python","script":"print(1)"})json";
  ClientResponse response = MustFetch(request);
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(response.headers.Get("Content-Length"), std::to_string(response.body.size()));
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["echo"]["script"], "print(1)");
  EXPECT_EQ(body["method"], "POST");
  EXPECT_EQ(body["path"], "/a b/c");
  EXPECT_EQ(body["target"], "/a%20b/c?wait=30&z=1");
  EXPECT_EQ(body["wait"], "30");
  EXPECT_EQ(body["trace"], "t-1");
  EXPECT_EQ(body["peer"], "127.0.0.1");
}

TEST(HttpServer, OversizedBodyIs413Problem) {
  std::atomic<int> calls{0};
  ServerOptions options;
  options.max_body_bytes = 1024;
  auto server = StartOrDie(
      [&calls](Request&) {
        ++calls;
        return JsonResponse(200, "{}");
      },
      options);
  ClientRequest request;
  request.method = "POST";
  request.url = Url(*server, "/execute");
  request.body = std::string(2 << 20, 'x');  // far past the limit: the server must drain, not reset
  ClientResponse response = MustFetch(request);
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/problem+json");
  EXPECT_EQ(nlohmann::json::parse(response.body)["code"], "BODY_TOO_LARGE");
  EXPECT_EQ(calls.load(), 0);

  request.body = std::string(1024, 'x');  // exactly at the limit is fine
  EXPECT_EQ(MustFetch(request).status, 200);
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  std::atomic<int> calls{0};
  auto server = StartOrDie([&calls](Request& request) {
    ++calls;
    return JsonResponse(200, R"({"path":")" + request.path + R"("})");
  });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.connected());
  for (const char* path : {"/one", "/two", "/three"}) {
    ASSERT_TRUE(connection.Send(std::string("GET ") + path + " HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto response = connection.Read();
    ASSERT_TRUE(response.has_value()) << path;
    EXPECT_EQ(response->status, 200);
    EXPECT_NE(response->body.find(path), std::string::npos);
  }
  EXPECT_EQ(calls.load(), 3);
  EXPECT_FALSE(connection.PeerClosed(milliseconds(100)));
}

// A body whose length the server cannot tell would be read as the next
// request: such framing is refused before the handler and the connection ends.
TEST(HttpServer, ATransferEncodingOtherThanChunkedIsRefusedAndCloses) {
  std::atomic<int> calls{0};
  auto server = StartOrDie([&calls](Request&) {
    ++calls;
    return JsonResponse(200, "{}");
  });
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
  for (const char* coding : {"chunked, identity", "identity", "gzip, chunked, gzip"}) {
    RawConnection connection(server->port());
    ASSERT_TRUE(connection.Send(std::string("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: ") +
                                coding + "\r\n\r\n" + smuggled));
    auto response = connection.Read();
    ASSERT_TRUE(response.has_value()) << coding;
    EXPECT_EQ(response->status, 400) << coding;
    EXPECT_NE(response->body.find("TRANSFER_ENCODING_INVALID"), std::string::npos) << coding;
    EXPECT_EQ(response->Header("Connection"), "close") << coding;
    EXPECT_TRUE(connection.PeerClosed(kHangGuard)) << coding;
  }
  // Two Transfer-Encoding fields are refused too; plain chunked is served.
  RawConnection twice(server->port());
  ASSERT_TRUE(
      twice.Send("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n0\r\n\r\n"));
  auto refused = twice.Read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(calls.load(), 0);
  RawConnection chunked(server->port());
  ASSERT_TRUE(chunked.Send(
      "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
  auto served = chunked.Read();
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpServer, ConnectionCloseIsHonoured) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "{}"); });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->Header("Connection"), "close");
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServer, StreamedChunksArriveBeforeTheHandlerFinishes) {
  auto first_seen = std::make_shared<Gate>();
  auto seen_in_time = std::make_shared<std::atomic<bool>>(false);
  auto server = StartOrDie([first_seen, seen_in_time](Request&) {
    Response response;
    response.headers.Set("Content-Type", "text/event-stream");
    response.stream = [first_seen, seen_in_time](const ChunkWriter& write) {
      write("data: first\n\n");
      // Holds the stream open until the client has the first event.
      *seen_in_time = first_seen->WaitFor(kHangGuard);
      write("data: second\n\n");
    };
    return response;
  });
  ClientRequest request;
  request.url = Url(*server, "/events");
  std::vector<std::string> chunks;
  std::optional<std::string> content_type;
  auto result = FetchStreaming(
      request, [&](const ClientResponse& head) { content_type = head.headers.Get("Content-Type"); },
      [&](std::string_view chunk) {
        chunks.emplace_back(chunk);
        first_seen->Open();
        return true;
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->headers.Get("Transfer-Encoding"), "chunked");
  EXPECT_EQ(content_type, "text/event-stream");
  EXPECT_TRUE(seen_in_time->load());
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], "data: first\n\n");
  EXPECT_EQ(chunks[1], "data: second\n\n");
}

TEST(HttpServer, StreamWriterReportsAGonePeer) {
  auto writer_failed = std::make_shared<Gate>();
  auto server = StartOrDie([writer_failed](Request&) {
    Response response;
    response.stream = [writer_failed](const ChunkWriter& write) {
      for (int i = 0; i < 500; ++i) {
        if (!write(std::string(64 << 10, 'x'))) {
          writer_failed->Open();
          return;
        }
      }
    };
    return response;
  });
  {
    RawConnection connection(server->port());
    ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  }  // closes without reading
  EXPECT_TRUE(writer_failed->WaitFor(kHangGuard));
}

TEST(HttpServer, NotModifiedHasNoBodyAndKeepsEtag) {
  auto server = StartOrDie([](Request& request) {
    Response response;
    response.headers.Set("ETag", "\"op_1-v3\"");
    if (request.headers.Get("If-None-Match") == "\"op_1-v3\"") {
      response.status = 304;
      response.body = "must not be sent";
    } else {
      response = JsonResponse(200, R"({"status":"running"})");
      response.headers.Set("ETag", "\"op_1-v3\"");
      response.headers.Set("Retry-After", "2");
    }
    return response;
  });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send(
      "GET /executions/op_1 HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"op_1-v3\"\r\n\r\n"));
  auto not_modified = connection.Read(/*expect_body=*/false);
  ASSERT_TRUE(not_modified.has_value());
  EXPECT_EQ(not_modified->status, 304);
  EXPECT_EQ(not_modified->Header("ETag"), "\"op_1-v3\"");
  EXPECT_EQ(not_modified->Header("Content-Length"), std::nullopt);
  // No stray body bytes: the next response on the connection parses cleanly.
  ASSERT_TRUE(connection.Send("GET /executions/op_1 HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto full = connection.Read();
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->status, 200);
  EXPECT_EQ(full->Header("ETag"), "\"op_1-v3\"");
  EXPECT_EQ(full->Header("Retry-After"), "2");
  EXPECT_EQ(full->body, R"({"status":"running"})");
}

TEST(HttpServer, HeadSendsLengthButNoBody) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "hello"); });
  RawConnection connection(server->port());
  ASSERT_TRUE(
      connection.Send("HEAD / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto head = connection.Read(/*expect_body=*/false);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->Header("Content-Length"), "5");
  auto get = connection.Read();
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, "hello");
}

TEST(HttpServer, MalformedRequestIs400Problem) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, "{}"); });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send("GET / HTTP/1.1\r\nHost: t\r\nContent-Length: banana\r\n\r\n"));
  auto response = connection.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(nlohmann::json::parse(response->body)["code"], "MALFORMED_REQUEST");
  EXPECT_TRUE(connection.PeerClosed(kHangGuard));
}

TEST(HttpServer, ThrowingHandlerIs500Problem) {
  auto server = StartOrDie([](Request&) -> Response { throw std::runtime_error("secret detail"); });
  ClientResponse response = Get(*server, "/");
  EXPECT_EQ(response.status, 500);
  auto body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["code"], "INTERNAL");
  EXPECT_EQ(response.body.find("secret detail"), std::string::npos);
}

TEST(HttpServer, ExpectContinueGetsAnInterimResponse) {
  auto server = StartOrDie([](Request& request) { return JsonResponse(200, request.body); });
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.Send(
      "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = connection.Read(/*expect_body=*/false);
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(connection.Send("{}"));
  auto final_response = connection.Read();
  ASSERT_TRUE(final_response.has_value());
  EXPECT_EQ(final_response->status, 200);
  EXPECT_EQ(final_response->body, "{}");
}

}  // namespace
}  // namespace aevatar::http
