#ifndef AEVATAR_TESTS_AEVATAR_TEST_SIGNER_H_
#define AEVATAR_TESTS_AEVATAR_TEST_SIGNER_H_

#include <string>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// The test's stand-in for NyxID's signing key: one Ed25519 key ("k1") that
// an IngressAuth built with lookup() trusts, and human access tokens signed
// with it.
class TestSigner {
 public:
  TestSigner() { jwks_.Add(base::Jwk{"k1", pair_.public_key}); }

  // A KeyLookup over this signer's key; valid while the signer lives.
  base::KeyLookup lookup() {
    return [this](std::string_view kid) -> absl::StatusOr<base::Jwk> {
      if (const base::Jwk* key = jwks_.Find(kid)) return *key;
      return absl::NotFoundError("no such key");
    };
  }

  // The claims of a fresh human access token of `subject`.
  static nlohmann::json AccessClaims(const std::string& subject) {
    const int64_t now = base::NowUnixSecs();
    return {{"sub", subject},          {"aud", "nyxid"}, {"token_kind", "access"},
            {"scope", "account:read"}, {"iat", now},     {"exp", now + 300}};
  }

  std::string Sign(const nlohmann::json& claims) const {
    return base::SignJws(claims, "k1", pair_.secret_key);
  }

 private:
  base::Ed25519KeyPair pair_ = base::GenerateEd25519KeyPair();
  base::Jwks jwks_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_TESTS_AEVATAR_TEST_SIGNER_H_
