#ifndef AEVATAR_TESTS_TESTING_TLS_FRONT_H_
#define AEVATAR_TESTS_TESTING_TLS_FRONT_H_

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

// OpenSSL's types, declared here so that tests need not include OpenSSL.
struct ssl_ctx_st;
struct ssl_st;

namespace aevatar::testing {

// A TLS terminator on 127.0.0.1 for tests of https clients, written with
// OpenSSL directly (tests do not include Boost). Each accepted connection
// gets its own thread: the TLS handshake with the fixture certificate, then
// a byte relay to a plain HTTP server on 127.0.0.1:backend_port, so a test's
// ordinary http::Server handler (streams and latches included) answers over
// https. With `handshake` false, connections are accepted and then left
// without a handshake (a stalled server). The destructor cuts every
// connection and joins the threads.
class TlsFront {
 public:
  TlsFront(uint16_t backend_port, const std::string& cert_file, const std::string& key_file,
           bool handshake = true);
  ~TlsFront();
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;

  // False when the certificate, key or listening socket could not be set up.
  bool ok() const { return listen_fd_ >= 0 && context_ != nullptr; }
  uint16_t port() const { return port_; }
  // Connections whose TLS handshake completed.
  int handshakes();

  // The committed test PKI in tests/http/testdata: "ca.pem" (the test CA),
  // "server.pem"/"server.key" (localhost and 127.0.0.1), "other.pem"/
  // "other.key" (other.example only), "client.pem"/"client.key" (a client
  // certificate), "rogue-client.pem"/".key" (one from another CA).
  static std::string Fixture(const std::string& name);

 private:
  void AcceptLoop();
  void Serve(int client_fd);
  void Relay(ssl_st* ssl, int client_fd);
  void Track(int fd);

  ssl_ctx_st* context_ = nullptr;
  const uint16_t backend_port_;
  const bool handshake_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: readable once the front is stopping
  uint16_t port_ = 0;
  absl::Mutex mu_;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
  int handshakes_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread acceptor_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_TLS_FRONT_H_
