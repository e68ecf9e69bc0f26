#include "nyxid/tokens/token_service.h"

#include <algorithm>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "nyxid/accounts/principal.h"
#include "nyxid/model.h"

namespace aevatar::nyxid {
namespace {

absl::Status TokenError(std::string code, std::string detail) {
  return base::ApiError(absl::StatusCode::kUnauthenticated, std::move(code), std::move(detail),
                        401);
}

}  // namespace

nlohmann::json TokenService::BaseClaims(const std::string& subject, int64_t ttl_secs) const {
  const int64_t now = now_();
  return {{"iss", issuer_},
          {"sub", subject},
          {"iat", now},
          {"nbf", now},
          {"exp", now + ttl_secs},
          {"jti", base::RandomId("jti_")},
          {"iat_ms", base::NowUnixMs()}};
}

std::string TokenService::IssueAccess(const std::string& user_id, const std::string& username,
                                      int64_t not_before_ms) const {
  nlohmann::json claims = BaseClaims(user_id, kAccessTokenTtlSecs);
  claims["iat_ms"] = std::max(claims["iat_ms"].get<int64_t>(), not_before_ms);
  claims["aud"] = kAccessAudience;
  claims["scope"] = kAccountReadScope;
  claims["token_kind"] = "access";
  claims["preferred_username"] = username;
  return keys_->Sign(claims);
}

std::string TokenService::MintDelegation(const std::string& user_id, const std::string& audience,
                                         const std::vector<std::string>& scopes,
                                         int64_t not_before_ms) const {
  return MintDelegationForScope(user_id, audience, JoinScopes(NormalizeScopes(scopes)),
                                not_before_ms);
}

std::string TokenService::MintDelegationForScope(const std::string& user_id,
                                                 const std::string& audience, std::string scope,
                                                 int64_t not_before_ms) const {
  nlohmann::json claims = BaseClaims(user_id, kDelegationTokenTtlSecs);
  claims["iat_ms"] = std::max(claims["iat_ms"].get<int64_t>(), not_before_ms);
  claims["aud"] = audience;
  claims["scope"] = std::move(scope);
  claims["token_kind"] = "delegation";
  return keys_->Sign(claims);
}

DelegationGrant TokenService::DelegationForProxy(const std::string& user_id,
                                                 const std::string& audience,
                                                 const std::vector<std::string>& scopes,
                                                 int64_t not_before_ms) const {
  // NUL cannot occur in ids, slugs or scopes, so the fields cannot run into
  // each other.
  std::string scope = JoinScopes(NormalizeScopes(scopes));
  std::string key = user_id;
  for (const std::string& part :
       {audience, scope, keys_->current_kid(), std::to_string(not_before_ms)}) {
    key += '\0';
    key += part;
  }
  const int64_t now = now_();
  if (std::optional<std::string> recent = recent_.Find(key, now)) {
    return {std::move(*recent), false};
  }
  std::string token = MintDelegationForScope(user_id, audience, std::move(scope), not_before_ms);
  recent_.Remember(std::move(key), token, now);
  return {std::move(token), true};
}

absl::StatusOr<VerifiedToken> TokenService::Verify(std::string_view token) const {
  const int64_t now = now_();
  auto verified =
      base::VerifyJws(token, [this, now](std::string_view kid) { return keys_->Lookup(kid, now); });
  if (!verified.ok()) return verified.status();
  const nlohmann::json& claims = verified->claims;
  if (!claims.is_object()) return TokenError("TOKEN_MALFORMED", "the token claims are malformed");
  auto iss = claims.find("iss");
  if (iss == claims.end() || !iss->is_string() || iss->get<std::string>() != issuer_) {
    return TokenError("TOKEN_ISSUER_MISMATCH", "the token was not issued by this NyxID");
  }
  auto kind = claims.find("token_kind");
  if (kind == claims.end() || !kind->is_string()) {
    return TokenError("TOKEN_KIND_MISMATCH", "the token has no token_kind");
  }
  VerifiedToken out;
  out.kind = kind->get<std::string>();
  base::ClaimRequirements requirements;
  requirements.now_unix = now;
  requirements.token_kind = out.kind;
  if (out.kind == "access") {
    requirements.audience = kAccessAudience;
  } else if (out.kind == "delegation") {
    auto aud = claims.find("aud");
    if (aud == claims.end() || !aud->is_string()) {
      return TokenError("TOKEN_MALFORMED", "a delegation token names one audience");
    }
    requirements.audience = aud->get<std::string>();
  } else {
    return TokenError("TOKEN_KIND_MISMATCH", "the token kind is not accepted here");
  }
  if (absl::Status st = base::VerifyClaims(claims, requirements); !st.ok()) return st;
  auto sub = claims.find("sub");
  if (sub == claims.end() || !sub->is_string() || sub->get<std::string>().empty()) {
    return TokenError("TOKEN_MALFORMED", "the token has no subject");
  }
  out.subject = sub->get<std::string>();
  out.audience = requirements.audience;
  auto scope = claims.find("scope");
  if (scope != claims.end() && scope->is_string()) {
    out.scopes = NormalizeScopes(scope->get<std::string>());
  }
  // VerifyClaims checked exp; a fractional or out-of-range one (never issued
  // here) reads as 0 rather than through an overflowing conversion.
  out.expires_at = base::IntOr(claims, "exp", 0);
  // The millisecond of issue (revocation compares it); a token without it
  // counts from the start of its iat second.
  out.issued_at_ms = base::IntOr(claims, "iat_ms", base::IntOr(claims, "iat", 0) * 1000);
  return out;
}

}  // namespace aevatar::nyxid
