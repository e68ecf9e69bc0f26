#ifndef AEVATAR_TESTS_TESTING_COUNTING_HTTP_SERVER_H_
#define AEVATAR_TESTS_TESTING_COUNTING_HTTP_SERVER_H_

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::testing {

// A minimal HTTP/1.1 server on 127.0.0.1 for tests of client connection
// reuse: it counts the connections it accepts and the requests it reads, and
// behaves on each connection as its Behavior says, including the ways a
// server ends a kept-alive connection that a real server only shows by
// chance. Every answer is 200 with the body "<METHOD> <n>" (n counts all
// requests). A thread per connection; the destructor cuts every connection
// and joins them.
class CountingHttpServer {
 public:
  enum class Behavior {
    kKeepAlive,          // answer every request, keep the connection open
    kConnectionClose,    // answer with `Connection: close`, then close
    kCloseAfterAnswer,   // answer as if keeping it, then close it (idle close)
    kDropSecondRequest,  // answer a connection's first request; read its
                         // second whole, then close without an answer
    kInterimFirst,       // send 100 Continue and 103 Early Hints before each answer
    kEndlessInterim,     // send 100 Continue, never an answer, until the client goes
  };

  // `hold_until`: answers wait until this many requests have been read (for
  // making concurrent exchanges overlap); 0 answers at once.
  explicit CountingHttpServer(Behavior behavior, int hold_until = 0);
  ~CountingHttpServer();
  CountingHttpServer(const CountingHttpServer&) = delete;
  CountingHttpServer& operator=(const CountingHttpServer&) = delete;

  bool ok() const { return listen_fd_ >= 0; }
  uint16_t port() const { return port_; }
  std::string Url(const std::string& path) const;

  int accepted();  // connections accepted
  int closed();    // connections this server has closed or seen end
  int requests();  // requests read whole (dropped ones included)
  int requests(const std::string& method);

 private:
  void AcceptLoop();
  void Serve(int fd);
  bool Stopping();

  const Behavior behavior_;
  const int hold_until_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int closed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> methods_ ABSL_GUARDED_BY(mu_);  // every request read, in order
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_COUNTING_HTTP_SERVER_H_
