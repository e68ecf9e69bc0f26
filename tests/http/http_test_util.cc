#include "http_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>

#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::http::testing {
std::unique_ptr<Server> StartOrDie(Handler handler, ServerOptions options) {
  options.host = "127.0.0.1";
  options.port = 0;
  auto server = Server::Start(options, std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

std::string Url(const Server& server, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + path;
}

ClientResponse MustFetch(const ClientRequest& request) {
  auto response = Fetch(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : ClientResponse{};
}

ClientResponse Get(const Server& server, const std::string& path) {
  ClientRequest request;
  request.url = Url(server, path);
  return MustFetch(request);
}

void Gate::Open() {
  absl::MutexLock lock(&mu_);
  open_ = true;
}

bool Gate::WaitFor(std::chrono::milliseconds timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&open_), absl::FromChrono(timeout));
}

bool Gate::is_open() {
  absl::MutexLock lock(&mu_);
  return open_;
}

RawConnection::RawConnection(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  timeval timeout{aevatar::testing::kHangGuard.count(), 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void RawConnection::Reset() {
  if (fd_ < 0) return;
  linger abort{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  ::close(fd_);
  fd_ = -1;
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::optional<RawResponse> RawConnection::Read(bool expect_body) {
  auto fill = [this](std::string& pending) {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending.append(buf, static_cast<size_t>(n));
    return true;
  };
  return aevatar::testing::ReadRawResponse(pending_, fill, expect_body);
}

bool RawConnection::PeerClosed(std::chrono::milliseconds timeout) {
  pollfd entry{fd_, POLLIN, 0};
  if (::poll(&entry, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char byte;
  return ::recv(fd_, &byte, 1, MSG_DONTWAIT) <= 0;
}

}  // namespace aevatar::http::testing
