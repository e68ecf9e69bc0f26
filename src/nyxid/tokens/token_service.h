#ifndef AEVATAR_NYXID_TOKENS_TOKEN_SERVICE_H_
#define AEVATAR_NYXID_TOKENS_TOKEN_SERVICE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "nyxid/tokens/recent_delegations.h"
#include "nyxid/tokens/signing_keys.h"

namespace aevatar::nyxid {

// Token format (compact JWS, header {"alg":"EdDSA","typ":"JWT","kid":…}):
//
//   access:     {iss, sub: user id, aud: "nyxid", scope: "account:read",
//                token_kind: "access", iat, nbf, exp: iat + 3600, jti,
//                iat_ms, preferred_username}
//   delegation: {iss, sub: caller's user id, aud: catalog slug of the route,
//                scope: the route's delegation_token_scope,
//                token_kind: "delegation", iat, nbf, exp: iat + 300, jti, iat_ms}
//
// chrono-sandbox verifies delegation tokens against /.well-known/jwks.json.
inline constexpr int64_t kAccessTokenTtlSecs = 3600;
inline constexpr int64_t kDelegationTokenTtlSecs = 300;
inline constexpr char kAccessAudience[] = "nyxid";

// What DelegationForProxy hands out: the token, and whether it was signed
// now (false: reused, see recent_delegations.h).
struct DelegationGrant {
  std::string token;
  bool minted = false;
};

struct VerifiedToken {
  std::string kind;  // "access" or "delegation"
  std::string subject;
  std::string audience;
  std::vector<std::string> scopes;  // sorted
  int64_t expires_at = 0;
  // When it was issued, in Unix ms (claim iat_ms), for revocation by
  // User::tokens_not_before_ms.
  int64_t issued_at_ms = 0;
};

// Issues and verifies the broker's own tokens. Thread-safe.
class TokenService {
 public:
  using NowUnix = std::function<int64_t()>;
  TokenService(const KeyRing* keys, std::string issuer, NowUnix now)
      : keys_(keys), issuer_(std::move(issuer)), now_(std::move(now)) {}

  // `not_before_ms` is the account's User::tokens_not_before_ms: the token
  // is dated no earlier, so a login in the millisecond after a logout is not
  // taken for a token the logout revoked.
  std::string IssueAccess(const std::string& user_id, const std::string& username,
                          int64_t not_before_ms = 0) const;
  // A new delegation token, dated no earlier than `not_before_ms` (as above).
  std::string MintDelegation(const std::string& user_id, const std::string& audience,
                             const std::vector<std::string>& scopes,
                             int64_t not_before_ms = 0) const;
  // For the proxy: the token minted for exactly this grant (user, audience,
  // scopes, signing key, `not_before_ms`) in the last
  // RecentDelegations::kReuseSecs, else a new one.
  DelegationGrant DelegationForProxy(const std::string& user_id, const std::string& audience,
                                     const std::vector<std::string>& scopes,
                                     int64_t not_before_ms) const;

  // Verifies a JWS this broker issued: alg EdDSA only, a published kid, the
  // signature, iss, exp/nbf/iat, and token_kind "access" (aud "nyxid") or
  // "delegation" (any audience: the scopes decide what it may do here).
  // Errors are typed 401s (TOKEN_MALFORMED, TOKEN_ALGORITHM_REJECTED,
  // TOKEN_KEY_UNKNOWN, TOKEN_SIGNATURE_INVALID, TOKEN_EXPIRED,
  // TOKEN_ISSUER_MISMATCH, TOKEN_KIND_MISMATCH, …).
  absl::StatusOr<VerifiedToken> Verify(std::string_view token) const;

  const std::string& issuer() const { return issuer_; }
  int64_t now() const { return now_(); }

 private:
  nlohmann::json BaseClaims(const std::string& subject, int64_t ttl_secs) const;
  // MintDelegation with the scope claim already normalized and joined.
  std::string MintDelegationForScope(const std::string& user_id, const std::string& audience,
                                     std::string scope, int64_t not_before_ms) const;

  const KeyRing* keys_;
  std::string issuer_;
  NowUnix now_;
  mutable RecentDelegations recent_;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_TOKEN_SERVICE_H_
