#include "base/login_throttle.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/api_error.h"

namespace aevatar::base {
namespace {

std::string AccountKey(const std::string& username) { return "account:" + username; }
std::string SourceKey(const std::string& source) { return "source:" + source; }

}  // namespace

absl::Status LoginThrottledError() {
  return ApiError(absl::StatusCode::kResourceExhausted, "LOGIN_THROTTLED",
                  "too many failed logins; retry after the Retry-After seconds", 429);
}

std::string RetryAfterSeconds(int64_t wait_ms) { return std::to_string((wait_ms + 999) / 1000); }

LoginThrottle::LoginThrottle(LoginThrottleOptions options, UnixMsClock now_ms)
    : options_(options), now_ms_(std::move(now_ms)) {}

int64_t LoginThrottle::RemainingLocked(const std::string& key, int64_t now) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return 0;
  return std::max<int64_t>(0, it->second.locked_until_ms - now);
}

int64_t LoginThrottle::RetryAfterMs(const std::string& username, const std::string& source) {
  const int64_t now = now_ms_();
  absl::MutexLock lock(&mu_);
  return std::max(RemainingLocked(AccountKey(username), now),
                  RemainingLocked(SourceKey(source), now));
}

int64_t LoginThrottle::Begin(const std::string& username, const std::string& source) {
  const int64_t now = now_ms_();
  absl::MutexLock lock(&mu_);
  const int64_t wait =
      std::max(RemainingLocked(AccountKey(username), now), RemainingLocked(SourceKey(source), now));
  if (wait > 0) return wait;
  Fail(AccountKey(username), options_.account_free_failures, now);
  Fail(SourceKey(source), options_.source_free_failures, now);
  if (entries_.size() > options_.max_keys) Evict(now);
  return 0;
}

void LoginThrottle::Succeeded(const std::string& username, const std::string& source) {
  absl::MutexLock lock(&mu_);
  entries_.erase(AccountKey(username));
  // The attempt was counted against its address when it began; a right
  // password takes that one back (never more: an attacker's own good login
  // must not reset the address's count).
  auto it = entries_.find(SourceKey(source));
  if (it == entries_.end() || it->second.failures == 0) return;
  --it->second.failures;
  if (it->second.failures <= options_.source_free_failures) it->second.locked_until_ms = 0;
}

void LoginThrottle::Fail(const std::string& key, int free_failures, int64_t now) {
  Entry& entry = entries_[key];
  if (now - entry.last_failure_ms >= options_.forget_after.count()) entry = Entry{};
  ++entry.failures;
  entry.last_failure_ms = now;
  const int over = entry.failures - free_failures;
  if (over <= 0) return;
  // base, 2 base, 4 base, … up to max_delay (the shift is bounded first).
  const int64_t delay = std::min<int64_t>(options_.max_delay.count(),
                                          options_.base_delay.count() << std::min(over - 1, 20));
  entry.locked_until_ms = now + delay;
}

void LoginThrottle::RecordFailure(const std::string& username, const std::string& source) {
  const int64_t now = now_ms_();
  absl::MutexLock lock(&mu_);
  Fail(AccountKey(username), options_.account_free_failures, now);
  Fail(SourceKey(source), options_.source_free_failures, now);
  if (entries_.size() > options_.max_keys) Evict(now);
}

void LoginThrottle::RecordSuccess(const std::string& username) {
  absl::MutexLock lock(&mu_);
  entries_.erase(AccountKey(username));
}

// Drops keys nobody needs to remember (unlocked and quiet), then the
// unlocked half that failed least recently. A locked key goes only when
// locked keys alone exceed twice the bound: flooding other names must not
// unlock an account under attack.
template <typename Drop>
void LoginThrottle::EraseIf(Drop drop) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = drop(it->second) ? entries_.erase(it) : std::next(it);
  }
}

void LoginThrottle::Evict(int64_t now) {
  EraseIf([&](const Entry& e) {
    return e.locked_until_ms <= now && now - e.last_failure_ms >= options_.forget_after.count();
  });
  if (entries_.size() <= options_.max_keys) return;
  std::vector<int64_t> times;
  times.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) times.push_back(entry.last_failure_ms);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  const int64_t median = times[times.size() / 2];
  EraseIf([&](const Entry& e) { return e.locked_until_ms <= now && e.last_failure_ms <= median; });
  if (entries_.size() <= 2 * options_.max_keys) return;
  EraseIf([&](const Entry& e) { return e.last_failure_ms <= median; });
}

size_t LoginThrottle::tracked_keys() {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

bool LoginThrottle::HasFreeHashSlot(LoginThrottle* throttle) {
  return throttle->hashing_ < throttle->options_.max_concurrent_hashes;
}

int DefaultHashConcurrency() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
}

void LoginThrottle::Tarpit(int64_t wait_ms) {
  // Half the wait: the answer still says Retry-After, and the key is still
  // locked when it arrives.
  const int64_t sleep_ms = std::min<int64_t>(wait_ms / 2, options_.tarpit.count());
  if (sleep_ms <= 0) return;
  if (tarpitted_.fetch_add(1) >= options_.max_tarpitted) {
    --tarpitted_;
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  --tarpitted_;
}

LoginThrottle::HashSlot::HashSlot(LoginThrottle& throttle) : throttle_(throttle) {
  absl::MutexLock lock(&throttle_.mu_);
  throttle_.mu_.Await(absl::Condition(&LoginThrottle::HasFreeHashSlot, &throttle_));
  ++throttle_.hashing_;
}

LoginThrottle::HashSlot::~HashSlot() {
  absl::MutexLock lock(&throttle_.mu_);
  --throttle_.hashing_;
}

}  // namespace aevatar::base
