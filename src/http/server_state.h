#ifndef AEVATAR_HTTP_SERVER_STATE_H_
#define AEVATAR_HTTP_SERVER_STATE_H_

// Private to src/http, included by server.cc only (see server_framing.h for
// why these are inline in headers): the state a server's listener,
// connections and handler threads share.

#include <atomic>
#include <chrono>
#include <memory>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "http/beast_private.h"
#include "http/connection_limit.h"
#include "http/handler_pool.h"
#include "http/server.h"
#include "http/tls.h"

namespace aevatar::http {

inline constexpr std::chrono::steady_clock::duration kWriteTimeout =
    std::chrono::seconds(60);  // the peer must take each write within this

// State shared by the listener, the connections and the handler threads.
struct Shared {
  ServerOptions options;
  Handler handler;
  std::shared_ptr<ssl::context> tls;  // null: plain TCP
  std::shared_ptr<HandlerPool> pool;
  std::unique_ptr<ConnectionLimit> limit;
  std::atomic<int> shedding{0};         // connections being answered 503 and closed
  std::atomic<bool> stopping{false};    // Stop() began: no new exchanges
  std::atomic<bool> io_stopped{false};  // I/O threads joined: strand work never runs
  absl::Mutex mu;
  int in_flight ABSL_GUARDED_BY(mu) = 0;  // requests dispatched and not yet answered
  std::set<beast::tcp_stream*> streams ABSL_GUARDED_BY(mu);  // open connections

  bool NoneInFlight() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return in_flight == 0; }
};

// Counts one request from dispatch until its response is written (or the
// connection dies), so Stop() can wait for in-flight work.
class InFlight {
 public:
  explicit InFlight(Shared& shared) : shared_(shared) {
    absl::MutexLock lock(&shared_.mu);
    ++shared_.in_flight;
  }
  ~InFlight() {
    absl::MutexLock lock(&shared_.mu);
    --shared_.in_flight;  // Stop() awaits NoneInFlight
  }

 private:
  Shared& shared_;
};

// Registers an open connection so Stop() can close it. A connection handed to
// a WebSocket session leaves early (Release, on its strand), so Stop() never
// reaches a stream the session has moved or destroyed.
class Registration {
 public:
  Registration(Shared& shared, beast::tcp_stream* stream) : shared_(shared), stream_(stream) {
    absl::MutexLock lock(&shared_.mu);
    shared_.streams.insert(stream_);
  }
  ~Registration() { Release(); }

  void Release() {
    if (stream_ == nullptr) return;
    absl::MutexLock lock(&shared_.mu);
    shared_.streams.erase(stream_);
    stream_ = nullptr;
  }

 private:
  Shared& shared_;
  beast::tcp_stream* stream_;
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_STATE_H_
