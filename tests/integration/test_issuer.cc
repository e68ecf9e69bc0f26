#include "test_issuer.h"

#include <fstream>

#include "base/clock.h"
#include "base/jws.h"

namespace aevatar::testing {

TestIssuer::TestIssuer(std::string kid)
    : kid_(std::move(kid)), keys_(base::GenerateEd25519KeyPair()) {}

std::string TestIssuer::JwksJson() const {
  base::Jwks jwks;
  jwks.Add({kid_, keys_.public_key});
  return jwks.ToJson();
}

void TestIssuer::WriteJwks(const std::string& path) const { std::ofstream(path) << JwksJson(); }

nlohmann::json TestIssuer::DelegationClaims(const std::string& subject,
                                            const std::string& scope) const {
  const int64_t now = base::NowUnixSecs();
  return {{"iss", "nyxid-test"},
          {"sub", subject},
          {"aud", "chrono-sandbox"},
          {"scope", scope},
          {"iat", now},
          {"exp", now + 300},
          {"jti", base::RandomId("jti_")},
          {"token_kind", "delegation"}};
}

std::string TestIssuer::Delegation(const std::string& subject, const std::string& scope) const {
  return Sign(DelegationClaims(subject, scope));
}

std::string TestIssuer::Sign(const nlohmann::json& claims) const {
  return base::SignJws(claims, kid_, keys_.secret_key);
}

std::string RawJws(const nlohmann::json& header, const nlohmann::json& claims,
                   const std::string& signature) {
  return base::Base64UrlEncode(header.dump()) + "." + base::Base64UrlEncode(claims.dump()) + "." +
         base::Base64UrlEncode(signature);
}

}  // namespace aevatar::testing
