#ifndef AEVATAR_NYXID_NODE_AGENT_NODE_DAEMON_H_
#define AEVATAR_NYXID_NODE_AGENT_NODE_DAEMON_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "http/websocket.h"
#include "nyxid/node_agent/node_profile.h"

// The node daemon: keeps one WebSocket open to NyxID (it connects out; the
// host needs no inbound port), reconnects with exponential backoff (1 s
// doubling to 30 s) when the connection drops or NyxID restarts, and answers
// NyxID's "ssh_exec" requests (ssh_relay.h), at most kMaxConcurrentExecs at
// once. It records its state in the profile's daemon.state:
//   {"state": "connecting" | "online" | "reconnecting" | "stopped",
//    "since_ms", "node_id", "pid", "last_error"?}
// The profile and its credentials are read again for each request, so keys
// added with `ssh-credentials add` apply without a restart.
namespace aevatar::nyxid::node {

class NodeDaemon {
 public:
  static constexpr int kMaxConcurrentExecs = 4;

  explicit NodeDaemon(std::string profile) : profile_(std::move(profile)) {}

  // Runs until Stop(); returns the process exit code (0, or 1 when the
  // profile cannot be read at start).
  int Run();
  // Thread-safe; ends Run() soon (a connection in progress is closed).
  void Stop();

 private:
  void Serve(const std::shared_ptr<http::WebSocket>& socket);
  void WriteState(const std::string& state, const std::string& last_error);
  bool SleepUnlessStopped(std::chrono::milliseconds duration);

  const std::string profile_;
  std::string state_path_;
  std::string node_id_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> running_execs_{0};
  absl::Mutex mu_;
  std::shared_ptr<http::WebSocket> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid::node

#endif  // AEVATAR_NYXID_NODE_AGENT_NODE_DAEMON_H_
