// Compact JWS tokens as every service verifies them, and the claims inside.
// The first byte picks the mode:
//   even: the rest is a token, verified against a fixed Ed25519 key (header,
//         alg, kid, base64url and signature checks; forged tokens fail);
//   odd:  the rest is a claims document, signed with that key, verified and
//         checked: the signed claims must verify and read back unchanged, and
//         VerifyClaims must never throw whatever the claim types.
// Properties: no crash or exception; sign-then-verify is the identity.
#include <sodium.h>

#include "base/json_read.h"
#include "base/jws.h"
#include "fuzz_check.h"

using namespace aevatar;

namespace {

struct FixedKey {
  FixedKey() {
    FUZZ_CHECK(sodium_init() >= 0);
    unsigned char seed[crypto_sign_SEEDBYTES];
    for (size_t i = 0; i < sizeof(seed); ++i) seed[i] = static_cast<unsigned char>(0x42 + i);
    unsigned char pk[crypto_sign_PUBLICKEYBYTES];
    unsigned char sk[crypto_sign_SECRETKEYBYTES];
    crypto_sign_seed_keypair(pk, sk, seed);
    public_key.assign(reinterpret_cast<char*>(pk), sizeof(pk));
    secret_key.assign(reinterpret_cast<char*>(sk), sizeof(sk));
  }
  std::string public_key;
  std::string secret_key;
};

const FixedKey& Key() {
  static const FixedKey* const key = new FixedKey();
  return *key;
}

absl::StatusOr<base::Jwk> Lookup(std::string_view kid) {
  if (kid == "k1") return base::Jwk{"k1", Key().public_key};
  return absl::NotFoundError("unknown kid");
}

void CheckClaims(const nlohmann::json& claims) {
  base::ClaimRequirements requirements;
  requirements.audience = "aevatar";
  requirements.token_kind = "delegation";
  requirements.required_scopes = {"account:read"};
  requirements.now_unix = 1'700'000'000;
  (void)base::VerifyClaims(claims, requirements);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = fuzz::AsText(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto verified = base::VerifyJws(rest, Lookup);
    if (verified.ok()) CheckClaims(verified->claims);
    return 0;
  }
  auto claims = base::ParseJsonObject(rest);
  if (!claims.ok()) return 0;
  CheckClaims(*claims);
  const std::string token = base::SignJws(*claims, "k1", Key().secret_key);
  auto verified = base::VerifyJws(token, Lookup);
  if (token.size() <= 16 * 1024) {
    FUZZ_CHECK(verified.ok());
    FUZZ_CHECK(verified->claims == *claims);
  }
  return 0;
}
