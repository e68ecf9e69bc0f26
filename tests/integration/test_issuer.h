#ifndef AEVATAR_TESTS_INTEGRATION_TEST_ISSUER_H_
#define AEVATAR_TESTS_INTEGRATION_TEST_ISSUER_H_

#include <string>

#include "base/crypto.h"
#include "nlohmann/json.hpp"

namespace aevatar::testing {

// Mints delegation tokens the way NyxID's proxy does, for tests that talk to
// chrono-sandbox directly. A test double of the token issuer only: the
// verification side under test is the real one.
class TestIssuer {
 public:
  explicit TestIssuer(std::string kid = "test-key-1");

  // The JWKS document publishing this issuer's key.
  std::string JwksJson() const;
  // Writes JwksJson() to `path`.
  void WriteJwks(const std::string& path) const;

  // A valid delegation token for `subject` (five minutes, aud chrono-sandbox).
  std::string Delegation(const std::string& subject,
                         const std::string& scope = "proxy:* sandbox:execute") const;
  // A token signed by this issuer with arbitrary claims.
  std::string Sign(const nlohmann::json& claims) const;
  // The standard claims Delegation() uses, for tests that tamper with one.
  nlohmann::json DelegationClaims(const std::string& subject, const std::string& scope) const;

  const std::string& kid() const { return kid_; }
  const std::string& secret_key() const { return keys_.secret_key; }

 private:
  std::string kid_;
  base::Ed25519KeyPair keys_;
};

// Builds a compact JWS from raw header/claims JSON and a signature, for
// forgery cases (alg none, HS256, wrong key).
std::string RawJws(const nlohmann::json& header, const nlohmann::json& claims,
                   const std::string& signature);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_TEST_ISSUER_H_
