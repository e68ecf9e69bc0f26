#ifndef AEVATAR_NYXID_TOKENS_RECENT_DELEGATIONS_H_
#define AEVATAR_NYXID_TOKENS_RECENT_DELEGATIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::nyxid {

// Delegation tokens the proxy minted in the last kReuseSecs, so that the
// next request for exactly the same grant is sent the same token: NyxID
// signs once, and the upstream's token check hits its table of verified
// tokens (base/verified_tokens.h) instead of a curve computation.
//
// The key is everything that decides a token's meaning and validity: the
// user, the audience, the scopes, the signing kid and the user's revocation
// point (tokens_not_before_ms). So a logout, a key rotation or a change of
// the route's scopes mints afresh. Reuse grants nothing a fresh token would
// not: the proxy authorises every request before it asks for a token, and a
// reused token carries the same claims to an upstream of the same audience.
// What is given up is a jti per request. A token handed out is at most
// kReuseSecs old, so it has at least its life minus kReuseSecs left (270 s
// of 300, beyond chrono-sandbox's longest run).
//
// Bounded: at kMaxEntries the expired entries are dropped, and if none
// were, all of them. Thread-safe.
class RecentDelegations {
 public:
  static constexpr int64_t kReuseSecs = 30;
  static constexpr size_t kMaxEntries = 4096;

  // The token remembered under `key`, if it was minted at or after
  // now_unix - kReuseSecs (and not after now_unix: a clock stepped back
  // reuses nothing).
  std::optional<std::string> Find(const std::string& key, int64_t now_unix) const;
  void Remember(std::string key, std::string token, int64_t minted_unix);

 private:
  struct Entry {
    std::string token;
    int64_t minted_unix = 0;
  };
  static bool Young(const Entry& entry, int64_t now_unix);

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_RECENT_DELEGATIONS_H_
