// ServerOptions::listen_fd: a server that serves a socket made elsewhere
// (the managed Codex runner makes its relay's in another network namespace).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http/server.h"

namespace aevatar::http {
namespace {

// A TCP socket listening on 127.0.0.1 (a free port); returns -1 on failure.
int ListenOnLoopback(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr;
  std::memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

TEST(HttpServerAdopt, ServesAGivenListeningSocketAndIgnoresHostAndPort) {
  uint16_t port = 0;
  const int fd = ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  ServerOptions options;
  options.listen_fd = fd;
  options.host = "not-an-address";  // ignored with a listen_fd
  auto server = Server::Start(options, [](Request& request) {
    return JsonResponse(200, "{\"path\":\"" + request.path + "\"}");
  });
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->port(), port);
  ClientRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/adopted";
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "{\"path\":\"/adopted\"}");
  (*server)->Stop();
  // The server owned the socket: it is closed now, so the port refuses.
  EXPECT_FALSE(Fetch(request).ok());
}

TEST(HttpServerAdopt, ADescriptorThatIsNotAListeningSocketIsRefusedAndClosed) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const int unbound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(unbound, 0);
  for (int fd : {pipe_fds[0], unbound}) {
    ServerOptions options;
    options.listen_fd = fd;
    auto server = Server::Start(options, [](Request&) { return JsonResponse(200, "{}"); });
    EXPECT_FALSE(server.ok()) << fd;
  }
  // Start owned them: the pipe's read end is closed, so its writer sees EPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(::write(pipe_fds[1], "x", 1), -1);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace aevatar::http
