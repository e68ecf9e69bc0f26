#include "testing/tls_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "testing/loopback_listener.h"

namespace aevatar::testing {
namespace {

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

TlsFront::TlsFront(uint16_t backend_port, const std::string& cert_file, const std::string& key_file,
                   bool handshake)
    : backend_port_(backend_port), handshake_(handshake) {
  ::signal(SIGPIPE, SIG_IGN);  // SSL_write to a client that went away
  context_ = SSL_CTX_new(TLS_server_method());
  if (context_ == nullptr || SSL_CTX_use_certificate_chain_file(context_, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(context_, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (context_ != nullptr) SSL_CTX_free(context_);
    context_ = nullptr;
    return;
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  listen_fd_ = ListenOnLoopback(16, port_);
  if (listen_fd_ < 0) return;
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TlsFront::~TlsFront() {
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t ignored = ::write(wake_fd_, &one, sizeof(one));
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> connections;
  {
    absl::MutexLock lock(&mu_);
    // Unblocks a thread inside SSL_accept or SSL_read.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    connections.swap(connections_);
  }
  for (std::thread& connection : connections) connection.join();
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) ::close(fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (context_ != nullptr) SSL_CTX_free(context_);
}

int TlsFront::handshakes() {
  absl::MutexLock lock(&mu_);
  return handshakes_;
}

std::string TlsFront::Fixture(const std::string& name) {
  return std::string(AEVATAR_SOURCE_DIR) + "/tests/http/testdata/" + name;
}

void TlsFront::Track(int fd) {
  absl::MutexLock lock(&mu_);
  open_fds_.push_back(fd);
}

void TlsFront::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    absl::MutexLock lock(&mu_);
    open_fds_.push_back(client);
    connections_.emplace_back([this, client] { Serve(client); });
  }
}

void TlsFront::Serve(int client_fd) {
  if (!handshake_) {
    pollfd wake{wake_fd_, POLLIN, 0};
    while (::poll(&wake, 1, -1) <= 0) {
    }
    return;
  }
  SSL* ssl = SSL_new(context_);
  SSL_set_fd(ssl, client_fd);
  if (SSL_accept(ssl) == 1) {
    {
      absl::MutexLock lock(&mu_);
      ++handshakes_;
    }
    Relay(ssl, client_fd);
  }
  SSL_free(ssl);
  ::shutdown(client_fd, SHUT_RDWR);  // the peer sees the end now; the destructor closes
}

void TlsFront::Relay(SSL* ssl, int client_fd) {
  const int backend = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (backend < 0) return;
  Track(backend);
  sockaddr_in address = Loopback(backend_port_);
  if (::connect(backend, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return;
  // Ends in every case with the backend shut, so the server sees the client go.
  struct Closer {
    int fd;
    ~Closer() { ::shutdown(fd, SHUT_RDWR); }
  } closer{backend};
  char buffer[16 << 10];
  pollfd fds[3] = {{client_fd, POLLIN, 0}, {backend, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (true) {
    // Bytes OpenSSL already decrypted are not visible to poll.
    bool from_client = fds[0].fd >= 0 && SSL_pending(ssl) > 0;
    bool from_backend = false;
    if (!from_client) {
      if (::poll(fds, 3, -1) < 0) continue;
      if (fds[2].revents != 0) break;
      from_client = fds[0].fd >= 0 && fds[0].revents != 0;
      from_backend = fds[1].revents != 0;
    }
    if (from_client) {
      const int n = SSL_read(ssl, buffer, sizeof(buffer));
      if (n <= 0) {
        fds[0].fd = -1;  // the client is done sending; its answer may still flow
        ::shutdown(backend, SHUT_WR);
      } else if (!SendAll(backend, buffer, static_cast<size_t>(n))) {
        break;
      }
    }
    if (from_backend) {
      const ssize_t n = ::read(backend, buffer, sizeof(buffer));
      if (n <= 0) {
        SSL_shutdown(ssl);  // close_notify: the end of the stream is genuine
        break;
      }
      if (SSL_write(ssl, buffer, static_cast<int>(n)) != n) break;
    }
  }
}

}  // namespace aevatar::testing
