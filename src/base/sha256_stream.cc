#include "base/sha256_stream.h"

#include <sodium.h>

#include "base/crypto.h"

namespace aevatar::base {

struct Sha256Stream::State {
  crypto_hash_sha256_state sha;
};

Sha256Stream::Sha256Stream() : state_(std::make_unique<State>()) {
  // Sha256Hex initialises libsodium once for the process (base/crypto.cc).
  (void)Sha256Hex("");
  crypto_hash_sha256_init(&state_->sha);
}

Sha256Stream::~Sha256Stream() = default;
Sha256Stream::Sha256Stream(Sha256Stream&&) noexcept = default;
Sha256Stream& Sha256Stream::operator=(Sha256Stream&&) noexcept = default;

void Sha256Stream::Update(std::string_view data) {
  crypto_hash_sha256_update(&state_->sha, reinterpret_cast<const unsigned char*>(data.data()),
                            data.size());
}

std::string Sha256Stream::FinalHex() {
  std::string digest(crypto_hash_sha256_BYTES, '\0');
  crypto_hash_sha256_final(&state_->sha, reinterpret_cast<unsigned char*>(digest.data()));
  return HexEncode(digest);
}

}  // namespace aevatar::base
