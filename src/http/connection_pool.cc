#include "http/connection_pool.h"

#include <utility>

#include "http/client_connection.h"

namespace aevatar::http {

ConnectionPool::ConnectionPool(Options options) : options_(options) {}

ConnectionPool::~ConnectionPool() = default;

size_t ConnectionPool::IdleCount() const {
  absl::MutexLock lock(&mu_);
  size_t count = 0;
  for (const auto& [key, parked] : idle_) count += parked.size();
  return count;
}

void ConnectionPool::TakeExpiredLocked(Clock::time_point now, std::deque<Parked>& closing) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    std::deque<Parked>& parked = it->second;
    while (!parked.empty() && now - parked.front().since >= options_.idle_timeout) {
      closing.push_back(std::move(parked.front()));
      parked.pop_front();
    }
    it = parked.empty() ? idle_.erase(it) : std::next(it);
  }
}

std::unique_ptr<PooledConnection> ConnectionPool::Take(const std::string& key) {
  std::deque<Parked> closing;  // closed after the lock is released
  absl::MutexLock lock(&mu_);
  TakeExpiredLocked(Clock::now(), closing);
  auto it = idle_.find(key);
  if (it == idle_.end()) return nullptr;
  // The newest: the least likely to have been closed by the server.
  std::unique_ptr<PooledConnection> connection = std::move(it->second.back().connection);
  it->second.pop_back();
  if (it->second.empty()) idle_.erase(it);
  return connection;
}

void ConnectionPool::Give(const std::string& key, std::unique_ptr<PooledConnection> connection) {
  std::deque<Parked> closing;
  absl::MutexLock lock(&mu_);
  Clock::time_point now = Clock::now();
  TakeExpiredLocked(now, closing);
  if (options_.max_idle_per_key == 0 || options_.idle_timeout.count() <= 0) {
    closing.push_back({std::move(connection), now});
    return;
  }
  std::deque<Parked>& parked = idle_[key];
  parked.push_back({std::move(connection), now});
  while (parked.size() > options_.max_idle_per_key) {
    closing.push_back(std::move(parked.front()));
    parked.pop_front();
  }
}

}  // namespace aevatar::http
