#ifndef AEVATAR_BASE_VERIFIED_TOKENS_H_
#define AEVATAR_BASE_VERIFIED_TOKENS_H_

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace aevatar::base {

// Compact JWS tokens whose signature has verified, remembered with the header
// and claims parsed from them. One stack call checks the same tokens several
// times (aevatar the caller's bearer, NyxID it again, chrono-sandbox the
// delegation token NyxID reuses for the grant); a hit costs one BLAKE2b hash,
// the kid's lookup and the copies, not three base64 decodes, two strict JSON
// parses and an Ed25519 verification (~50 µs on this project's VM).
//
// An entry is keyed by a 256-bit hash of the token's exact bytes and keeps
// the kid and public key that verified it. VerifyJws still resolves the kid
// on every hit and uses the entry only if the key it gets now is the key that
// verified, so a rotated-out or replaced key misses; and the claims (exp,
// aud, scopes) are still checked by the caller each time. Only successes are
// kept. An entry holds the decoded header and claims but never the signature
// or the encoded token, so nothing in it can be presented as a bearer.
// Bounded: kSlots entries, a new one replacing whichever shared its slot.
// Thread-safe.
class VerifiedTokens {
 public:
  static constexpr size_t kSlots = 1024;
  using Digest = std::array<unsigned char, 32>;

  struct Entry {
    Digest digest;
    std::string kid;
    std::string public_key;
    nlohmann::json header;
    nlohmann::json claims;
  };

  // Initialises libsodium (its hash picks an implementation at start).
  VerifiedTokens();

  static Digest DigestOf(std::string_view token);
  // The entry remembered for exactly this digest, or null.
  std::shared_ptr<const Entry> Find(const Digest& digest) const;
  void Remember(std::shared_ptr<const Entry> entry);

 private:
  static size_t SlotOf(const Digest& digest);

  mutable absl::Mutex mu_;
  std::array<std::shared_ptr<const Entry>, kSlots> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_VERIFIED_TOKENS_H_
