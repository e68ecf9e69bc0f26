// HTTP/1.1 request framing as every service's server reads it off the wire.
// src/http has no framing function of its own to call (Beast parses inside
// the server's connection coroutine), so the target drives the real
// http::Server over loopback: one connection per input, the input's bytes
// sent as they are, the write side closed, and the answer read to the end.
//
// Properties: no crash or exception in the server; it never hangs (every
// connection ends within 5 s of the input being sent); whatever it answers
// starts with an HTTP/1.1 status line; and it keeps answering a well-formed
// request afterwards.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "http/server.h"

using namespace aevatar;

namespace {

constexpr int kIoTimeoutSecs = 5;

// The handler looks at what framing produced, the way service handlers do.
http::Response Echo(http::Request& request) {
  const std::string summary =
      std::to_string(request.method.size()) + " " + std::to_string(request.path.size()) + " " +
      std::to_string(request.headers.fields().size()) + " " + std::to_string(request.body.size()) +
      " " + std::to_string(request.QueryParam("x").value_or("").size()) + " " +
      std::to_string(http::BearerToken(request).value_or("").size());
  return http::JsonResponse(200, "{\"summary\":\"" + summary + "\"}");
}

uint16_t ServerPort() {
  // Started once and kept for the whole fuzzing process.
  static http::Server* const server = [] {
    http::ServerOptions options;
    options.io_threads = 1;
    options.max_body_bytes = 64 << 10;
    // A fuzz input that never completes its header must not stall the run.
    options.header_timeout = std::chrono::milliseconds(2000);
    options.body_timeout = std::chrono::milliseconds(2000);
    options.idle_timeout = std::chrono::milliseconds(2000);
    auto started = http::Server::Start(options, Echo);
    FUZZ_CHECK(started.ok());
    return started->release();
  }();
  return server->port();
}

// Connects `fd`. libFuzzer's timers interrupt system calls; an interrupted
// connect goes on in the background, so it is waited for, not repeated.
bool Connect(int fd, const sockaddr_in& address) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) return true;
  if (errno != EINTR && errno != EINPROGRESS) {
    std::perror("connect to the server under test");
    return false;
  }
  pollfd writable{fd, POLLOUT, 0};
  int ready = 0;
  do {
    ready = ::poll(&writable, 1, kIoTimeoutSecs * 1000);
  } while (ready < 0 && errno == EINTR);
  int error = 0;
  socklen_t length = sizeof(error);
  if (ready != 1 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    std::fprintf(stderr, "connect to the server under test did not complete\n");
    return false;
  }
  return true;
}

// Sends `bytes` on a fresh connection, closes the write side, and returns
// everything the server sent until it closed. Aborts when it hangs.
std::string Exchange(std::string_view bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  FUZZ_CHECK(fd >= 0);
  timeval timeout{kIoTimeoutSecs, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(ServerPort());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  FUZZ_CHECK(Connect(fd, address));
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server stopped reading (e.g. it already answered 431)
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    // A timeout here means the server neither answered nor closed: a hang.
    FUZZ_CHECK(!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)));
    if (n <= 0) break;  // closed, or reset after an early answer
    answer.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string answer = Exchange(fuzz::AsText(data, size));
  if (!answer.empty()) FUZZ_CHECK(answer.rfind("HTTP/1.1 ", 0) == 0);
  static unsigned inputs = 0;
  if (++inputs % 64 == 0) {
    const std::string health = Exchange("GET /healthz HTTP/1.1\r\nHost: fuzz\r\n\r\n");
    FUZZ_CHECK(health.rfind("HTTP/1.1 200 ", 0) == 0);
  }
  return 0;
}
