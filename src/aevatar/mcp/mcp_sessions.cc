#include "aevatar/mcp/mcp_sessions.h"

#include <algorithm>
#include <utility>

#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

void CancelAll(std::map<std::string, std::shared_ptr<McpSessions::Call>>& calls) {
  for (auto& [key, call] : calls) {
    if (!call->cancelled.HasBeenNotified()) call->cancelled.Notify();
  }
}

}  // namespace

McpSessions::McpSessions(size_t max_sessions, size_t max_per_user, absl::Duration idle_ttl,
                         std::function<absl::Time()> now)
    : max_sessions_(std::max<size_t>(1, max_sessions)),
      max_per_user_(std::max<size_t>(1, max_per_user)),
      idle_ttl_(idle_ttl),
      now_(std::move(now)) {}

std::string McpSessions::Open(const std::string& user_id, const std::string& protocol_version) {
  std::string id = base::RandomId("mcps_");
  absl::MutexLock lock(&mu_);
  MakeRoomLocked(user_id);
  sessions_[id] = Session{user_id, protocol_version, ++clock_, now_(), {}};
  return id;
}

void McpSessions::EvictLocked(SessionMap::iterator session) {
  CancelAll(session->second.calls);
  sessions_.erase(session);
}

McpSessions::SessionMap::iterator McpSessions::LeastRecentLocked(
    const std::function<bool(const Session&)>& eligible) {
  auto found = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (!eligible(it->second)) continue;
    if (found == sessions_.end() || it->second.last_used < found->second.last_used) found = it;
  }
  return found;
}

void McpSessions::MakeRoomLocked(const std::string& user_id) {
  // The caller's own sessions first: its least recently used one.
  std::map<std::string, size_t> held;
  for (const auto& [id, session] : sessions_) ++held[session.user_id];
  if (held[user_id] >= max_per_user_) {
    EvictLocked(LeastRecentLocked([&](const Session& s) { return s.user_id == user_id; }));
  }
  if (sessions_.size() < max_sessions_) return;
  const absl::Time idle_before = now_() - idle_ttl_;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    auto next = std::next(it);
    if (it->second.calls.empty() && it->second.last_seen < idle_before) EvictLocked(it);
    it = next;
  }
  while (sessions_.size() >= max_sessions_) {
    auto victim = LeastRecentLocked([](const Session& s) { return s.calls.empty(); });
    if (victim == sessions_.end()) {
      // Every session has a call in flight: the caller holding the most
      // gives one up, the opener itself on a tie.
      held.clear();
      for (const auto& [id, session] : sessions_) ++held[session.user_id];
      std::string busiest = user_id;
      for (const auto& [holder, count] : held) {
        if (count > held[busiest]) busiest = holder;
      }
      victim = LeastRecentLocked([&](const Session& s) { return s.user_id == busiest; });
    }
    EvictLocked(victim);
  }
}

McpSessions::Session* McpSessions::FindLocked(const std::string& id, const std::string& user_id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.user_id != user_id) return nullptr;
  it->second.last_used = ++clock_;
  it->second.last_seen = now_();
  return &it->second;
}

absl::StatusOr<std::string> McpSessions::Find(const std::string& id, const std::string& user_id) {
  absl::MutexLock lock(&mu_);
  Session* session = FindLocked(id, user_id);
  if (session == nullptr) return absl::NotFoundError("no such MCP session");
  return session->protocol_version;
}

absl::Status McpSessions::Close(const std::string& id, const std::string& user_id) {
  absl::MutexLock lock(&mu_);
  Session* session = FindLocked(id, user_id);
  if (session == nullptr) return absl::NotFoundError("no such MCP session");
  CancelAll(session->calls);
  sessions_.erase(id);
  return absl::OkStatus();
}

std::shared_ptr<McpSessions::Call> McpSessions::Begin(const std::string& id,
                                                      const std::string& request_key) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.calls.count(request_key) > 0) return nullptr;
  auto call = std::make_shared<Call>();
  it->second.calls[request_key] = call;
  return call;
}

void McpSessions::End(const std::string& id, const std::string& request_key) {
  absl::MutexLock lock(&mu_);
  if (auto it = sessions_.find(id); it != sessions_.end()) it->second.calls.erase(request_key);
}

bool McpSessions::Cancel(const std::string& id, const std::string& user_id,
                         const std::string& request_key) {
  absl::MutexLock lock(&mu_);
  Session* session = FindLocked(id, user_id);
  if (session == nullptr) return false;
  auto call = session->calls.find(request_key);
  if (call == session->calls.end()) return false;
  if (!call->second->cancelled.HasBeenNotified()) call->second->cancelled.Notify();
  return true;
}

size_t McpSessions::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace aevatar::orchestrator
