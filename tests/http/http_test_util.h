#ifndef AEVATAR_TESTS_HTTP_HTTP_TEST_UTIL_H_
#define AEVATAR_TESTS_HTTP_HTTP_TEST_UTIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "http/client.h"
#include "http/server.h"
#include "testing/raw_response.h"

// Helpers for the http tests: a server on loopback, URLs to it, a one-shot
// gate, and a raw socket for what the client cannot show (keep-alive, framing).
namespace aevatar::http::testing {

// Starts `handler` on 127.0.0.1 with a free port; fails the test if it cannot.
std::unique_ptr<Server> StartOrDie(Handler handler, ServerOptions options = {});

// "http://127.0.0.1:<port><path>".
std::string Url(const Server& server, const std::string& path);

// Fetches `request`, failing the test (and returning status 0) on a transport error.
ClientResponse MustFetch(const ClientRequest& request);

// GET `path` on `server` via MustFetch.
ClientResponse Get(const Server& server, const std::string& path);

// A gate that opens once and stays open. Share it by shared_ptr with handlers
// so that a handler outliving its test never touches freed memory.
class Gate {
 public:
  void Open();
  // Returns true if the gate opened within `timeout`.
  bool WaitFor(std::chrono::milliseconds timeout);
  bool is_open();

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

using aevatar::testing::RawResponse;

// A blocking TCP connection to 127.0.0.1:port; a read or write that blocks
// past the hang guard (testing/poll.h) fails.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // Sends all of `bytes`; returns false on error.
  bool Send(const std::string& bytes);
  // Reads one response. With `expect_body` false (HEAD, 304) no body is read
  // even when Content-Length is present. Returns nullopt on EOF or timeout.
  std::optional<RawResponse> Read(bool expect_body = true);
  // Closes at once with a reset (SO_LINGER 0), as a vanishing client might,
  // leaving no TIME_WAIT socket to hold a local port for a minute.
  void Reset();
  // True when the peer has closed (EOF or reset) within `timeout`.
  bool PeerClosed(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  std::string pending_;  // bytes read past the last response
};

}  // namespace aevatar::http::testing

#endif  // AEVATAR_TESTS_HTTP_HTTP_TEST_UTIL_H_
