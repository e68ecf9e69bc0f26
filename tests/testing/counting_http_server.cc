#include "testing/counting_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "testing/loopback_listener.h"
#include "testing/poll.h"

namespace aevatar::testing {
namespace {

// Reads one request (header and Content-Length body) from `fd`; returns its
// method, or nullopt when the peer closed or the connection was cut.
std::optional<std::string> ReadRequest(int fd, std::string& pending) {
  size_t header_end;
  while ((header_end = pending.find("\r\n\r\n")) == std::string::npos) {
    char chunk[4096];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    pending.append(chunk, static_cast<size_t>(n));
  }
  std::string head = pending.substr(0, header_end);
  size_t body_bytes = 0;
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    std::string lower = absl::AsciiStrToLower(line);
    if (lower.rfind("content-length:", 0) == 0) {
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(lower.substr(15)), &body_bytes);
    }
  }
  size_t total = header_end + 4 + body_bytes;
  while (pending.size() < total) {
    char chunk[4096];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    pending.append(chunk, static_cast<size_t>(n));
  }
  pending.erase(0, total);
  return head.substr(0, head.find(' '));
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

CountingHttpServer::CountingHttpServer(Behavior behavior, int hold_until)
    : behavior_(behavior), hold_until_(hold_until) {
  listen_fd_ = ListenOnLoopback(64, port_);
  if (listen_fd_ < 0) return;
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

CountingHttpServer::~CountingHttpServer() {
  std::vector<std::thread> connections;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (std::thread& thread : connections) thread.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string CountingHttpServer::Url(const std::string& path) const {
  return absl::StrCat("http://127.0.0.1:", port_, path);
}

int CountingHttpServer::accepted() {
  absl::MutexLock lock(&mu_);
  return accepted_;
}

int CountingHttpServer::closed() {
  absl::MutexLock lock(&mu_);
  return closed_;
}

bool CountingHttpServer::Stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

int CountingHttpServer::requests() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(methods_.size());
}

int CountingHttpServer::requests(const std::string& method) {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(std::count(methods_.begin(), methods_.end(), method));
}

void CountingHttpServer::AcceptLoop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;  // shut down by the destructor
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    ++accepted_;
    open_fds_.push_back(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void CountingHttpServer::Serve(int fd) {
  std::string pending;
  for (int on_connection = 1;; ++on_connection) {
    std::optional<std::string> method = ReadRequest(fd, pending);
    if (!method) break;
    int number;
    {
      absl::MutexLock lock(&mu_);
      methods_.push_back(*method);
      number = static_cast<int>(methods_.size());
    }
    if (behavior_ == Behavior::kDropSecondRequest && on_connection == 2) break;
    if (hold_until_ > 0) {
      auto enough = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || static_cast<int>(methods_.size()) >= hold_until_;
      };
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&enough), absl::FromChrono(kHangGuard));
    }
    if (behavior_ == Behavior::kEndlessInterim) {
      while (SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n") && !Stopping()) {
      }
      break;
    }
    if (behavior_ == Behavior::kInterimFirst &&
        !SendAll(fd,
                 "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n"
                 "Link: </x.css>; rel=preload\r\n\r\n")) {
      break;
    }
    std::string body = absl::StrCat(*method, " ", number);
    bool close = behavior_ == Behavior::kConnectionClose;
    std::string answer = absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", body.size(),
                                      close ? "\r\nConnection: close" : "", "\r\n\r\n", body);
    if (!SendAll(fd, answer) || close || behavior_ == Behavior::kCloseAfterAnswer) break;
  }
  absl::MutexLock lock(&mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
  ++closed_;
}

}  // namespace aevatar::testing
