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

McpSessions::McpSessions(size_t max_sessions) : max_sessions_(std::max<size_t>(1, max_sessions)) {}

std::string McpSessions::Open(const std::string& user_id, const std::string& protocol_version) {
  std::string id = base::RandomId("mcps_");
  absl::MutexLock lock(&mu_);
  while (sessions_.size() >= max_sessions_) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](auto& a, auto& b) {
      return a.second.last_used < b.second.last_used;
    });
    CancelAll(oldest->second.calls);
    sessions_.erase(oldest);
  }
  sessions_[id] = Session{user_id, protocol_version, ++clock_, {}};
  return id;
}

McpSessions::Session* McpSessions::FindLocked(const std::string& id, const std::string& user_id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.user_id != user_id) return nullptr;
  it->second.last_used = ++clock_;
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
