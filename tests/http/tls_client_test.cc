// https in the HTTP client: a TLS front (tests/testing/tls_front.h) with the
// committed test PKI (tests/http/testdata) relays to an ordinary in-test
// server, so every case shows what the client verified and what reached the
// server.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "testing/poll.h"
#include "testing/tls_front.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::kHangGuard;
using ::aevatar::testing::TlsFront;
using std::chrono::milliseconds;
using testing::Gate;
using testing::StartOrDie;

std::string HttpsUrl(const std::string& host, const TlsFront& front, const std::string& path) {
  return "https://" + host + ":" + std::to_string(front.port()) + path;
}

// A server that echoes what it saw and counts the requests that reached it.
std::unique_ptr<Server> EchoServer(const std::shared_ptr<std::atomic<int>>& requests) {
  return StartOrDie([requests](Request& request) {
    ++*requests;
    nlohmann::json seen = {{"host", request.headers.Get("Host").value_or("")},
                           {"body", request.body}};
    return JsonResponse(200, seen.dump());
  });
}

TEST(HttpsClient, FetchWithTheTestCaSucceedsByNameAndByAddress) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoServer(requests);
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"));
  ASSERT_TRUE(front.ok());
  for (const char* host : {"localhost", "127.0.0.1"}) {
    ClientRequest request;
    request.method = "POST";
    request.url = HttpsUrl(host, front, "/x");
    request.body = "abc";
    request.tls.ca_file = TlsFront::Fixture("ca.pem");
    auto response = Fetch(request);
    ASSERT_TRUE(response.ok()) << host << ": " << response.status();
    auto seen = nlohmann::json::parse(response->body);
    EXPECT_EQ(seen["host"], std::string(host) + ":" + std::to_string(front.port()));
    EXPECT_EQ(seen["body"], "abc");
  }
  EXPECT_EQ(front.handshakes(), 2);
  EXPECT_EQ(*requests, 2);
}

TEST(HttpsClient, UntrustedCertificateIsATypedVerificationError) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoServer(requests);
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"));
  ASSERT_TRUE(front.ok());
  ClientRequest request;
  request.url = HttpsUrl("localhost", front, "/");  // the system store lacks the test CA
  auto response = Fetch(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_NE(response.status().message().find("TLS verification"), std::string::npos)
      << response.status();
  EXPECT_EQ(*requests, 0);  // nothing was sent to an unverified peer
}

TEST(HttpsClient, CertificateForAnotherHostIsAVerificationError) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoServer(requests);
  // Trusted (signed by the test CA) but issued for other.example only.
  TlsFront front(server->port(), TlsFront::Fixture("other.pem"), TlsFront::Fixture("other.key"));
  ASSERT_TRUE(front.ok());
  for (const char* host : {"localhost", "127.0.0.1"}) {
    ClientRequest request;
    request.url = HttpsUrl(host, front, "/");
    request.tls.ca_file = TlsFront::Fixture("ca.pem");
    auto response = Fetch(request);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
    EXPECT_NE(response.status().message().find("TLS verification"), std::string::npos)
        << response.status();
    EXPECT_NE(response.status().message().find("hostname mismatch"), std::string::npos)
        << response.status();
  }
  EXPECT_EQ(*requests, 0);
}

constexpr char kFirst[] = "event: one\ndata: {}\n\n";
constexpr char kSecond[] = "event: two\ndata: {}\n\n";

TEST(HttpsClient, ServerSentEventsArriveChunkByChunk) {
  auto first_seen = std::make_shared<Gate>();
  auto server = StartOrDie([first_seen](Request&) {
    Response response;
    response.headers.Set("Content-Type", "text/event-stream");
    response.stream = [first_seen](const ChunkWriter& write) {
      if (!write(kFirst)) return;
      first_seen->WaitFor(kHangGuard);  // the client must see the first event on its own
      write(kSecond);
    };
    return response;
  });
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"));
  ASSERT_TRUE(front.ok());
  ClientRequest request;
  request.url = HttpsUrl("localhost", front, "/events");
  request.tls.ca_file = TlsFront::Fixture("ca.pem");
  std::string content_type;
  std::string body;
  std::string before_gate;
  auto response = FetchStreaming(
      request,
      [&](const ClientResponse& head) {
        content_type = head.headers.Get("Content-Type").value_or("");
      },
      [&](std::string_view chunk) {
        body.append(chunk);
        if (!first_seen->is_open() && body.size() >= sizeof(kFirst) - 1) {
          before_gate = body;  // everything received before the server may go on
          first_seen->Open();
        }
        return true;
      });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(content_type, "text/event-stream");
  EXPECT_EQ(before_gate, kFirst);
  EXPECT_EQ(body, std::string(kFirst) + kSecond);
}

TEST(HttpsClient, StalledHandshakeIsDeadlineExceeded) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoServer(requests);
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"),
                 /*handshake=*/false);
  ASSERT_TRUE(front.ok());
  ClientRequest request;
  request.url = HttpsUrl("localhost", front, "/");
  request.tls.ca_file = TlsFront::Fixture("ca.pem");
  request.timeout = milliseconds(300);
  auto response = Fetch(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded) << response.status();
}

TEST(HttpsClient, OversizedResponseIsResourceExhausted) {
  auto server = StartOrDie([](Request&) { return JsonResponse(200, std::string(10000, 'x')); });
  TlsFront front(server->port(), TlsFront::Fixture("server.pem"), TlsFront::Fixture("server.key"));
  ASSERT_TRUE(front.ok());
  ClientRequest request;
  request.url = HttpsUrl("localhost", front, "/");
  request.tls.ca_file = TlsFront::Fixture("ca.pem");
  request.max_response_bytes = 1000;
  EXPECT_EQ(Fetch(request).status().code(), absl::StatusCode::kResourceExhausted);
  request.max_response_bytes = 10000;
  EXPECT_TRUE(Fetch(request).ok());
}

TEST(HttpsClient, UnusableCaFileIsInvalidArgument) {
  EXPECT_TRUE(CheckCaFile(TlsFront::Fixture("ca.pem")).ok());
  for (const std::string& bad :
       {std::string(), TlsFront::Fixture("missing.pem"), TlsFront::Fixture("generate.sh")}) {
    EXPECT_EQ(CheckCaFile(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  ClientRequest request;
  request.url = "https://127.0.0.1:1/";
  request.tls.ca_file = TlsFront::Fixture("missing.pem");
  EXPECT_EQ(Fetch(request).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace aevatar::http
