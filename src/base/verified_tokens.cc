#include "base/verified_tokens.h"

#include <sodium.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace aevatar::base {

VerifiedTokens::VerifiedTokens() {
  if (sodium_init() < 0) std::abort();
}

VerifiedTokens::Digest VerifiedTokens::DigestOf(std::string_view token) {
  Digest digest;
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const unsigned char*>(token.data()), token.size(), nullptr,
                     0);
  return digest;
}

size_t VerifiedTokens::SlotOf(const Digest& digest) {
  uint32_t index;
  std::memcpy(&index, digest.data(), sizeof(index));
  return index % kSlots;
}

std::shared_ptr<const VerifiedTokens::Entry> VerifiedTokens::Find(const Digest& digest) const {
  std::shared_ptr<const Entry> entry;
  {
    absl::MutexLock lock(&mu_);
    entry = slots_[SlotOf(digest)];
  }
  if (entry == nullptr || entry->digest != digest) return nullptr;
  return entry;
}

void VerifiedTokens::Remember(std::shared_ptr<const Entry> entry) {
  const size_t slot = SlotOf(entry->digest);
  // The replaced entry is freed after the lock is released.
  absl::MutexLock lock(&mu_);
  slots_[slot].swap(entry);
}

}  // namespace aevatar::base
