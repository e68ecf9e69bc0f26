#ifndef AEVATAR_TESTS_TESTING_TLS_PROBE_H_
#define AEVATAR_TESTS_TESTING_TLS_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>

// OpenSSL's types, declared here so that tests need not include OpenSSL.
struct ssl_ctx_st;
struct ssl_st;

namespace aevatar::testing {

// One raw TLS connection to 127.0.0.1:port, written with OpenSSL directly,
// for what http::Fetch cannot show: several requests on one TLS session
// (keep-alive), a handshake with or without a client certificate, bytes as
// sent. The server is verified against `ca_file` (chain and 127.0.0.1).
// Reads and writes give up after the hang guard (testing/poll.h).
class TlsProbe {
 public:
  TlsProbe(uint16_t port, const std::string& ca_file, const std::string& cert_file = "",
           const std::string& key_file = "");
  ~TlsProbe();
  TlsProbe(const TlsProbe&) = delete;
  TlsProbe& operator=(const TlsProbe&) = delete;

  // True once the handshake completed and the server's certificate verified.
  bool ok() const { return ssl_ != nullptr; }
  bool Send(const std::string& bytes);
  // Reads one response framed by Content-Length: its status and body, or
  // nullopt when the connection ended first (a refused client certificate
  // shows here under TLS 1.3, where the server's verdict follows the
  // handshake).
  std::optional<std::pair<int, std::string>> ReadResponse();

 private:
  ssl_ctx_st* context_ = nullptr;
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;
  std::string pending_;  // bytes read past the last response
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_TLS_PROBE_H_
