#include "testing/tls_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <utility>

#include "testing/poll.h"
#include "testing/raw_response.h"

namespace aevatar::testing {

TlsProbe::TlsProbe(uint16_t port, const std::string& ca_file, const std::string& cert_file,
                   const std::string& key_file) {
  context_ = SSL_CTX_new(TLS_client_method());
  if (context_ == nullptr || SSL_CTX_load_verify_locations(context_, ca_file.c_str(), nullptr) != 1)
    return;
  SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
  if (!cert_file.empty() &&
      (SSL_CTX_use_certificate_chain_file(context_, cert_file.c_str()) != 1 ||
       SSL_CTX_use_PrivateKey_file(context_, key_file.c_str(), SSL_FILETYPE_PEM) != 1)) {
    return;
  }
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  timeval guard{static_cast<time_t>(kHangGuard.count()), 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &guard, sizeof(guard));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return;
  SSL* ssl = SSL_new(context_);
  SSL_set_fd(ssl, fd_);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
  if (SSL_connect(ssl) != 1) {
    SSL_free(ssl);
    return;
  }
  ssl_ = ssl;
}

TlsProbe::~TlsProbe() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (context_ != nullptr) SSL_CTX_free(context_);
  if (fd_ >= 0) ::close(fd_);
}

bool TlsProbe::Send(const std::string& bytes) {
  return ssl_ != nullptr && SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
                                static_cast<int>(bytes.size());
}

std::optional<std::pair<int, std::string>> TlsProbe::ReadResponse() {
  if (ssl_ == nullptr) return std::nullopt;
  auto fill = [this](std::string& pending) {
    char chunk[4096];
    int n = SSL_read(ssl_, chunk, sizeof(chunk));
    if (n <= 0) return false;
    pending.append(chunk, static_cast<size_t>(n));
    return true;
  };
  std::optional<RawResponse> response = ReadRawResponse(pending_, fill);
  if (!response) return std::nullopt;
  return std::make_pair(response->status, std::move(response->body));
}

}  // namespace aevatar::testing
