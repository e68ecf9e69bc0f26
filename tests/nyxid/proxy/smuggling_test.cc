// Hostile requests at NyxID's proxy. Request smuggling: a real `nyxid serve` in front of a raw
// TCP upstream that records every byte it receives. Conflicting framing
// (Content-Length with Transfer-Encoding, two lengths), CR or LF in the path
// or a header value, and oversized headers must be refused with a typed
// problem before the upstream sees a single byte; an ordinary request
// through the same route then shows the upstream was reachable all along.
// SSRF: users cannot set an upstream, and one that resolves to the cloud
// metadata address is refused at request time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "http_test_util.h"
#include "nyxid_fixture.h"
#include "testing/poll.h"

namespace aevatar::testing {
namespace {

// A TCP listener on loopback that keeps what each connection sent (up to the
// end of its header block) and answers every connection with a 200.
class ByteRecorder {
 public:
  ByteRecorder() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
      return;
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ByteRecorder() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }
  // What each connection sent, in the order they were accepted.
  std::vector<std::string> Received() const {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd entry{listen_fd_, POLLIN, 0};
      if (::poll(&entry, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string bytes;
      char buffer[4096];
      while (bytes.find("\r\n\r\n") == std::string::npos) {
        pollfd readable{fd, POLLIN, 0};
        if (::poll(&readable, 1, 5000) <= 0) break;
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        bytes.append(buffer, static_cast<size_t>(n));
      }
      {
        absl::MutexLock lock(&mu_);
        received_.push_back(bytes);
      }
      constexpr char kAnswer[] =
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      (void)::send(fd, kAnswer, sizeof(kAnswer) - 1, MSG_NOSIGNAL);
      ::close(fd);
    }
  }

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::vector<std::string> received_ ABSL_GUARDED_BY(mu_);
};

std::string Bootstrap(uint16_t upstream_port) {
  return R"yaml(
users:
  - {username: alice, password: alice-password-1}
user_services:
  - owner: {user: alice}
    slug: echo
    base_url: 'http://127.0.0.1:)yaml" +
         std::to_string(upstream_port) + R"yaml('
    forward_access_token: false
    inject_delegation_token: false
  - owner: {user: alice}
    slug: metadata
    base_url: 'http://2852039166:9'
)yaml";
}

class ProxySmuggling : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nyxid_.ok()) << nyxid_.service().ReadLog();
    token_ = nyxid_.Login("alice", "alice-password-1");
    ASSERT_FALSE(token_.empty());
    via_ = nyxid_.KeyBySlug(token_, "echo").value("id", "");
    ASSERT_FALSE(via_.empty());
  }
  uint16_t NyxidPort() const {
    const std::string url = nyxid_.url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }
  // "<method> /api/v1/proxy/echo/<rest>?_nyxid_via=… HTTP/1.1" and the
  // Host and Authorization lines; the caller adds the rest.
  std::string Head(const std::string& method, const std::string& rest) const {
    return method + " /api/v1/proxy/echo/" + rest + "?_nyxid_via=" + via_ +
           " HTTP/1.1\r\nHost: nyxid\r\nAuthorization: Bearer " + token_ + "\r\n";
  }
  // Sends `bytes` on a fresh connection and returns NyxID's answer.
  http::testing::RawResponse Send(const std::string& bytes) {
    http::testing::RawConnection connection(NyxidPort());
    EXPECT_TRUE(connection.connected());
    EXPECT_TRUE(connection.Send(bytes));
    auto response = connection.Read();
    EXPECT_TRUE(response.has_value()) << "no answer to " << bytes.substr(0, 80);
    return response.value_or(http::testing::RawResponse{});
  }
  http::testing::RawResponse ExpectRefused(const std::string& bytes, int status,
                                           const std::string& code) {
    const http::testing::RawResponse response = Send(bytes);
    const std::string head = bytes.substr(0, bytes.find("\r\n\r\n"));
    EXPECT_EQ(response.status, status) << head.substr(head.find("Bearer") + 7 + token_.size());
    EXPECT_NE(response.body.find("\"code\":\"" + code + "\""), std::string::npos) << response.body;
    return response;
  }

  ByteRecorder upstream_;
  NyxidFixture nyxid_{Bootstrap(upstream_.port())};
  std::string token_, via_;
};

TEST_F(ProxySmuggling, AmbiguousFramingCrlfAndHugeHeadersNeverReachTheUpstream) {
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: upstream\r\n\r\n";
  const std::string chunked_body = "0\r\n\r\n" + smuggled;
  // Content-Length and Transfer-Encoding together (CL.TE / TE.CL).
  ExpectRefused(Head("POST", "a") + "Content-Length: " + std::to_string(chunked_body.size()) +
                    "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_body,
                400, "MALFORMED_REQUEST");
  ExpectRefused(
      Head("POST", "a") + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n" + chunked_body,
      400, "MALFORMED_REQUEST");
  // Two different lengths, in one field and in two.
  ExpectRefused(Head("POST", "a") + "Content-Length: 3\r\nContent-Length: 40\r\n\r\nabc", 400,
                "MALFORMED_REQUEST");
  ExpectRefused(Head("POST", "a") + "Content-Length: 3, 40\r\n\r\nabc", 400, "MALFORMED_REQUEST");
  // A last transfer coding other than chunked: no determinable length, so
  // the body would be read as the connection's next request. Refused by
  // NyxID's HTTP server, which also closes the connection.
  for (const char* coding : {"chunked, identity", "identity", "gzip"}) {
    auto refused = ExpectRefused(
        Head("POST", "a") + "Transfer-Encoding: " + coding + "\r\n\r\n" + chunked_body, 400,
        "TRANSFER_ENCODING_INVALID");
    EXPECT_EQ(refused.Header("Connection").value_or(""), "close") << coding;
  }
  // CR or LF in the path, raw or percent-encoded.
  ExpectRefused(Head("GET", "a\r\nX-Injected: 1\r\n\r\n" + smuggled), 400, "MALFORMED_REQUEST");
  ExpectRefused(Head("GET", "a%0d%0aX-Injected:%201") + "\r\n", 400, "PROXY_PATH_INVALID");
  ExpectRefused(Head("GET", "a%0aGET%20/smuggled") + "\r\n", 400, "PROXY_PATH_INVALID");
  // CR or LF inside a header value.
  ExpectRefused(Head("GET", "a") + "X-Note: one\rX-Injected: 1\r\n\r\n", 400, "MALFORMED_REQUEST");
  ExpectRefused(Head("GET", "a") + "X-Note: one\nX-Injected: 1\r\n\r\n", 400, "MALFORMED_REQUEST");
  // Oversized header fields.
  ExpectRefused(Head("GET", "a") + "X-Big: " + std::string(64 << 10, 'b') + "\r\n\r\n", 431,
                "HEADERS_TOO_LARGE");

  // The control: an ordinary request through the same route reaches the upstream.
  const http::testing::RawResponse control = Send(Head("GET", "control") + "\r\n");
  EXPECT_EQ(control.status, 200) << control.head << "\n" << control.body;
  ASSERT_TRUE(PollUntil([&] { return !upstream_.Received().empty(); }));
  const std::vector<std::string> received = upstream_.Received();
  ASSERT_EQ(received.size(), 1u) << "a refused request reached the upstream: " << received[0];
  EXPECT_EQ(received[0].rfind("GET /control", 0), 0u) << received[0];
  EXPECT_EQ(received[0].find("smuggled"), std::string::npos);
  EXPECT_EQ(received[0].find("X-Injected"), std::string::npos);
}

// An obsolete line fold (RFC 9112 §5.2) is not refused (that would take the
// HTTP server, src/http), but it is unfolded into one value: the folded line
// never becomes a header of its own upstream.
TEST_F(ProxySmuggling, AFoldedHeaderLineReachesTheUpstreamAsOneValue) {
  const http::testing::RawResponse response =
      Send(Head("GET", "folded") + "X-Note: one\r\n X-Injected: 1\r\n\r\n");
  EXPECT_EQ(response.status, 200) << response.body;
  ASSERT_TRUE(PollUntil([&] { return !upstream_.Received().empty(); }));
  const std::string received = upstream_.Received().front();
  EXPECT_EQ(received.find("\nX-Injected"), std::string::npos) << received;
  EXPECT_EQ(received.find("\n X-Injected"), std::string::npos) << received;
}

TEST_F(ProxySmuggling, UsersCannotSetAnUpstream) {
  ExpectProblem(nyxid_.Call("POST", "/api/v1/user-services", token_,
                            R"({"catalog_service_id":"x","slug":"mine",)"
                            R"("base_url":"http://169.254.169.254/"})"),
                400, "USER_SERVICE_FIELD_READ_ONLY");
  ExpectProblem(nyxid_.Call("PUT", "/api/v1/user-services/" + via_, token_,
                            R"({"base_url":"http://169.254.169.254/"})"),
                400, "USER_SERVICE_FIELD_READ_ONLY");
}

// 2852039166 is 169.254.169.254 as one number: no IP literal to the URL
// check, but the resolver's answer is the metadata address.
TEST_F(ProxySmuggling, AnUpstreamResolvingToTheMetadataAddressIsRefused) {
  const std::string metadata = nyxid_.KeyBySlug(token_, "metadata").value("id", "");
  ASSERT_FALSE(metadata.empty());
  ExpectProblem(nyxid_.Call("GET", "/api/v1/proxy/metadata/latest?_nyxid_via=" + metadata, token_),
                403, "UPSTREAM_ADDRESS_FORBIDDEN");
}

}  // namespace
}  // namespace aevatar::testing
