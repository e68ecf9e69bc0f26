#ifndef AEVATAR_BASE_VERIFIED_SIGNATURES_H_
#define AEVATAR_BASE_VERIFIED_SIGNATURES_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::base {

// Ed25519 signatures that have verified, remembered so that the same token
// presented again (a caller's bearer on every request, checked by aevatar and
// again by NyxID's proxy) costs one BLAKE2b hash instead of a curve
// computation (~50 µs on this project's VM).
//
// An entry is a 256-bit hash of (public key, signature, message): a hit means
// exactly this key verified exactly these bytes before, so a changed key, a
// rotated-out key (the caller no longer finds it) or one flipped bit all miss.
// Only successes are kept; a forged token never enters. Bounded: a fixed
// table of kSlots entries, where a new entry replaces whichever shared its
// slot. Thread-safe.
class VerifiedSignatures {
 public:
  static constexpr size_t kSlots = 4096;

  // Initialises libsodium (its hash picks an implementation at start).
  VerifiedSignatures();

  bool Contains(std::string_view public_key, std::string_view message,
                std::string_view signature) const;
  void Remember(std::string_view public_key, std::string_view message, std::string_view signature);

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest DigestOf(std::string_view public_key, std::string_view message,
                         std::string_view signature);
  static size_t SlotOf(const Digest& digest);

  mutable absl::Mutex mu_;
  std::array<Digest, kSlots> slots_ ABSL_GUARDED_BY(mu_) = {};
};

// Ed25519Verify through one process-wide VerifiedSignatures.
bool Ed25519VerifyRemembered(std::string_view public_key, std::string_view message,
                             std::string_view signature);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_VERIFIED_SIGNATURES_H_
