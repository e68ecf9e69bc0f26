#ifndef AEVATAR_HTTP_CONNECTION_LIMIT_H_
#define AEVATAR_HTTP_CONNECTION_LIMIT_H_

#include <atomic>
#include <cstdint>
#include <optional>

// Private to src/http: how many connections a server may hold open.
//
// Two caps apply to every accepted connection: the server's own
// `max_connections`, and one budget shared by every Server in the process
// (`aevatar up` runs three): the open-file limit, raised to its hard limit at
// first use, less a reserve for what else the process opens (databases,
// pipes, outgoing connections, sandboxes). A connection past either cap is
// shed, so the process never runs out of descriptors and keeps accepting, and
// answering /healthz, however many idle peers hold connections.
namespace aevatar::http {

// Returns the process-wide connection budget for an open-file limit of
// `fd_limit`: the limit less max(256, fd_limit / 8), at least 1.
int64_t ConnectionBudgetFor(uint64_t fd_limit);

class ConnectionLimit {
 public:
  // A place held by one open connection; gives it back on destruction.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : limit_(other.limit_) { other.limit_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot();

   private:
    friend class ConnectionLimit;
    explicit Slot(ConnectionLimit* limit) : limit_(limit) {}
    ConnectionLimit* limit_;
  };

  // `max_connections` caps this server; the process budget is computed (and
  // RLIMIT_NOFILE raised) on the first construction in the process.
  explicit ConnectionLimit(int max_connections);
  ConnectionLimit(const ConnectionLimit&) = delete;
  ConnectionLimit& operator=(const ConnectionLimit&) = delete;

  // Returns a slot, or nullopt when this server or the process is at its cap.
  // Slots must not outlive this object. Thread-safe.
  std::optional<Slot> TryAcquire();

  // Connections of this server holding a slot now.
  int open() const { return open_.load(); }

 private:
  void Release();

  const int max_connections_;
  std::atomic<int> open_{0};
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CONNECTION_LIMIT_H_
