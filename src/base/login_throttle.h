#ifndef AEVATAR_BASE_LOGIN_THROTTLE_H_
#define AEVATAR_BASE_LOGIN_THROTTLE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"

// Slows password guessing (NyxID's POST /api/v1/auth/login, and aevatar's
// /ui/login before it forwards to NyxID). Failures are counted
// per account name (existing or not: a throttled answer tells nothing about
// whether the account exists) and per source address; past a few free
// failures each further one locks that key for exponentially longer, and a
// locked key is answered 429 with Retry-After before any password hashing.
// Hashing itself (Argon2id, ~150 ms of a core) runs at most
// `max_concurrent_hashes` at a time, so bad logins cannot take every core.
// Memory is bounded: at most `max_keys` keys are tracked. Thread-safe.
namespace aevatar::base {

// max(1, hardware threads / 2).
int DefaultHashConcurrency();

struct LoginThrottleOptions {
  int account_free_failures = 5;
  // Higher: many people can share an address (a NAT, or aevatar's /ui
  // login, which reaches NyxID from aevatar's own address).
  int source_free_failures = 20;
  std::chrono::milliseconds base_delay{1000};
  std::chrono::milliseconds max_delay{std::chrono::minutes(15)};
  // A key without a failure for this long starts over.
  std::chrono::milliseconds forget_after{std::chrono::minutes(15)};
  size_t max_keys = 10000;
  // Half the cores (at least one): bad logins never take every core.
  int max_concurrent_hashes = DefaultHashConcurrency();
  // A refused (locked) attempt is answered after waiting half its lock, up
  // to this much, at most `max_tarpitted` at a time: a guesser's connection
  // then costs one request a second, not thousands, while the wait holds
  // only a sleeping thread, never a core. 0: answer at once.
  std::chrono::milliseconds tarpit{1000};
  int max_tarpitted = 64;
};

// The refusal of a locked key: 429 LOGIN_THROTTLED (base::ApiError), sent
// with Retry-After: RetryAfterSeconds(the wait).
absl::Status LoginThrottledError();
std::string RetryAfterSeconds(int64_t wait_ms);

class LoginThrottle {
 public:
  LoginThrottle(LoginThrottleOptions options, UnixMsClock now_ms);

  // How a login uses it: Begin before hashing; when it answers 0 the
  // attempt may go on and already counts as a failure (so a burst of
  // concurrent attempts cannot all pass the free limit while they hash);
  // Succeeded after a right password takes that back. Otherwise Begin
  // answers how many milliseconds until `username` from `source` may try.
  int64_t Begin(const std::string& username, const std::string& source);
  void Succeeded(const std::string& username, const std::string& source);

  // The primitive steps (Begin and Succeeded are made of them).
  // Milliseconds until `username` from `source` may try again; 0: now.
  int64_t RetryAfterMs(const std::string& username, const std::string& source);
  void RecordFailure(const std::string& username, const std::string& source);
  // A correct password clears the account's failures (not the source's: an
  // attacker's own good login must not reset the address's count).
  void RecordSuccess(const std::string& username);

  // Sleeps half of `wait_ms`, up to the tarpit, before a locked attempt is
  // answered, when fewer than max_tarpitted are already sleeping; past
  // that, returns at once (the pool of request threads stays free).
  void Tarpit(int64_t wait_ms);

  // How many account names and addresses are remembered (<= about max_keys).
  size_t tracked_keys();

  // Holds one of the `max_concurrent_hashes` hashing slots while it lives.
  class HashSlot {
   public:
    explicit HashSlot(LoginThrottle& throttle);
    ~HashSlot();
    HashSlot(const HashSlot&) = delete;
    HashSlot& operator=(const HashSlot&) = delete;

   private:
    LoginThrottle& throttle_;
  };

 private:
  struct Entry {
    int failures = 0;
    int64_t last_failure_ms = 0;
    int64_t locked_until_ms = 0;
  };

  int64_t RemainingLocked(const std::string& key, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Fail(const std::string& key, int free_failures, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Evict(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename Drop>
  void EraseIf(Drop drop) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Await's condition; called with mu_ held.
  static bool HasFreeHashSlot(LoginThrottle* throttle) ABSL_NO_THREAD_SAFETY_ANALYSIS;

  const LoginThrottleOptions options_;
  const UnixMsClock now_ms_;
  absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  int hashing_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int> tarpitted_{0};
};

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_LOGIN_THROTTLE_H_
