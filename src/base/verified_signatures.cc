#include "base/verified_signatures.h"

#include <sodium.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "base/crypto.h"

namespace aevatar::base {
namespace {

void Absorb(crypto_generichash_state& state, std::string_view bytes) {
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(bytes.data()),
                            bytes.size());
}

}  // namespace

VerifiedSignatures::VerifiedSignatures() {
  if (sodium_init() < 0) std::abort();
}

VerifiedSignatures::Digest VerifiedSignatures::DigestOf(std::string_view public_key,
                                                        std::string_view message,
                                                        std::string_view signature) {
  // Lengths first, so no two (key, signature, message) triples hash the same bytes.
  const uint64_t lengths[2] = {public_key.size(), signature.size()};
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, sizeof(Digest));
  Absorb(state, std::string_view(reinterpret_cast<const char*>(lengths), sizeof(lengths)));
  Absorb(state, public_key);
  Absorb(state, signature);
  Absorb(state, message);
  Digest digest;
  crypto_generichash_final(&state, digest.data(), digest.size());
  return digest;
}

size_t VerifiedSignatures::SlotOf(const Digest& digest) {
  uint32_t index;
  std::memcpy(&index, digest.data(), sizeof(index));
  return index % kSlots;
}

bool VerifiedSignatures::Contains(std::string_view public_key, std::string_view message,
                                  std::string_view signature) const {
  const Digest digest = DigestOf(public_key, message, signature);
  absl::MutexLock lock(&mu_);
  return slots_[SlotOf(digest)] == digest;
}

void VerifiedSignatures::Remember(std::string_view public_key, std::string_view message,
                                  std::string_view signature) {
  const Digest digest = DigestOf(public_key, message, signature);
  absl::MutexLock lock(&mu_);
  slots_[SlotOf(digest)] = digest;
}

bool Ed25519VerifyRemembered(std::string_view public_key, std::string_view message,
                             std::string_view signature) {
  static VerifiedSignatures* const remembered = new VerifiedSignatures();
  if (remembered->Contains(public_key, message, signature)) return true;
  if (!Ed25519Verify(public_key, message, signature)) return false;
  remembered->Remember(public_key, message, signature);
  return true;
}

}  // namespace aevatar::base
