#ifndef AEVATAR_HTTP_CONNECTION_POOL_H_
#define AEVATAR_HTTP_CONNECTION_POOL_H_

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::http {

// An open client connection (socket, TLS state, its own io_context), parked
// between exchanges. Defined in src/http/client_connection.h (Boost inside).
struct PooledConnection;

// Idle HTTP/1.1 keep-alive connections that a client's exchanges reuse
// (ClientRequest::pool). Connections are parked under a key naming
// everything a connection was set up for: scheme, host, port and, for https,
// the trust and client identity it was verified with (ClientTls), so a
// connection is only ever reused for a request that would have made the
// same one. The client parks a connection only when the server left it open
// (HTTP/1.1, no `Connection: close`) and the whole response was read; see
// client.h for what happens when a parked connection turns out closed.
//
// Bounds: at most `max_idle_per_key` idle connections per key (the oldest
// go first) and none idle longer than `idle_timeout` (below the servers'
// own idle timeouts, 30 s for this project's, so the client normally closes
// first). Busy connections are not counted: the pool never limits how many
// exchanges run at once. Thread-safe.
class ConnectionPool {
 public:
  struct Options {
    size_t max_idle_per_key = 16;
    std::chrono::milliseconds idle_timeout{10'000};
  };

  explicit ConnectionPool(Options options);
  ConnectionPool() : ConnectionPool(Options{}) {}
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Idle connections held now, over every key.
  size_t IdleCount() const;

  // Private to src/http/client.cc. Take returns the most recently parked
  // connection under `key` that has not idled past the timeout (expired ones
  // are closed), or nullptr; the caller owns it until it Gives it back.
  std::unique_ptr<PooledConnection> Take(const std::string& key);
  // Parks `connection` under `key` (a connection the server left open, after
  // a fully read response), closing the oldest past the bound.
  void Give(const std::string& key, std::unique_ptr<PooledConnection> connection);

 private:
  using Clock = std::chrono::steady_clock;
  struct Parked {
    std::unique_ptr<PooledConnection> connection;
    Clock::time_point since;
  };
  // Moves every expired connection into `closing` (closed after the lock).
  void TakeExpiredLocked(Clock::time_point now, std::deque<Parked>& closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  // Per key, oldest first.
  std::map<std::string, std::deque<Parked>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CONNECTION_POOL_H_
