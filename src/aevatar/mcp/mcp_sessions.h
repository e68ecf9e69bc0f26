#ifndef AEVATAR_AEVATAR_MCP_MCP_SESSIONS_H_
#define AEVATAR_AEVATAR_MCP_MCP_SESSIONS_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace aevatar::orchestrator {

// The Streamable HTTP sessions of POST /mcp: which caller opened each
// session (Mcp-Session-Id), the protocol version it negotiated, and its calls
// in flight, so that notifications/cancelled (a separate POST) or the
// session's DELETE can stop a run another request is waiting on.
//
// Sessions live in this process only: a client that reaches another replica
// (or this one after a restart) gets 404 and initializes again, as the
// protocol prescribes.
//
// Room is made per caller first, so that one caller cannot close another's
// sessions (and cancel its runs) by opening many: a caller holding
// `max_per_user` sessions loses its own least recently used one. When the
// process holds `max_sessions`, sessions idle longer than `idle_ttl` go,
// then the least recently used session without a call in flight, and only
// then the least recently used of the caller holding the most. Thread-safe.
class McpSessions {
 public:
  explicit McpSessions(size_t max_sessions = 4096, size_t max_per_user = 32,
                       absl::Duration idle_ttl = absl::Hours(1),
                       std::function<absl::Time()> now = absl::Now);

  // A call in flight: `cancelled` is notified once by Cancel or Close.
  struct Call {
    absl::Notification cancelled;
  };

  // Opens a session for `user_id`; returns its id (random, unguessable).
  std::string Open(const std::string& user_id, const std::string& protocol_version);
  // Returns the session's protocol version. NotFound when `id` is unknown or
  // was opened by another user (the same answer: ids do not leak).
  absl::StatusOr<std::string> Find(const std::string& id, const std::string& user_id);
  // Closes the session and cancels its calls in flight. NotFound as for Find.
  absl::Status Close(const std::string& id, const std::string& user_id);

  // Registers call `request_key` of session `id` (Find succeeded first).
  // Returns null when the session is gone or a call with that key is in
  // flight already.
  std::shared_ptr<Call> Begin(const std::string& id, const std::string& request_key);
  // Forgets the call (every Begin is paired with one End).
  void End(const std::string& id, const std::string& request_key);
  // Cancels call `request_key` of `user_id`'s session `id`; false when no
  // such call is in flight.
  bool Cancel(const std::string& id, const std::string& user_id, const std::string& request_key);

  size_t size() const;

 private:
  struct Session {
    std::string user_id;
    std::string protocol_version;
    uint64_t last_used = 0;  // the order of use, for LRU
    absl::Time last_seen;    // the time of use, for the idle TTL
    std::map<std::string, std::shared_ptr<Call>> calls;
  };
  using SessionMap = std::map<std::string, Session>;
  Session* FindLocked(const std::string& id, const std::string& user_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The least recently used session that `eligible` accepts, or end().
  SessionMap::iterator LeastRecentLocked(const std::function<bool(const Session&)>& eligible)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes room for one more session of `user_id` (see the class comment).
  void MakeRoomLocked(const std::string& user_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cancels the session's calls and forgets it.
  void EvictLocked(SessionMap::iterator session) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_sessions_;
  const size_t max_per_user_;
  const absl::Duration idle_ttl_;
  const std::function<absl::Time()> now_;
  mutable absl::Mutex mu_;
  SessionMap sessions_ ABSL_GUARDED_BY(mu_);
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_MCP_MCP_SESSIONS_H_
