#include "http_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::http::testing {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

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

std::optional<std::string> RawResponse::Header(const std::string& name) const {
  std::string wanted = Lower(name) + ":";
  size_t start = head.find("\r\n");
  while (start != std::string::npos) {
    start += 2;
    size_t end = head.find("\r\n", start);
    std::string line = head.substr(start, end == std::string::npos ? end : end - start);
    if (Lower(line).rfind(wanted, 0) == 0) {
      std::string value = line.substr(wanted.size());
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      return value;
    }
    start = end;
  }
  return std::nullopt;
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
  auto fill = [&]() {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) return std::nullopt;
  }
  RawResponse response;
  response.head = pending_.substr(0, end);
  pending_.erase(0, end + 4);
  response.status = std::atoi(response.head.substr(9, 3).c_str());
  size_t length = 0;
  if (auto header = response.Header("Content-Length"); header && expect_body) {
    length = std::strtoul(header->c_str(), nullptr, 10);
  }
  while (pending_.size() < length) {
    if (!fill()) return std::nullopt;
  }
  response.body = pending_.substr(0, length);
  pending_.erase(0, length);
  return response;
}

bool RawConnection::PeerClosed(std::chrono::milliseconds timeout) {
  pollfd entry{fd_, POLLIN, 0};
  if (::poll(&entry, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char byte;
  return ::recv(fd_, &byte, 1, MSG_DONTWAIT) <= 0;
}

}  // namespace aevatar::http::testing
