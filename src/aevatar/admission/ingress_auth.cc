#include "aevatar/admission/ingress_auth.h"

#include "absl/strings/match.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kAgentKeyPrefix[] = "nyxid_ag_";
constexpr char kAccountRead[] = "account:read";
constexpr char kDelegationHeader[] = "X-NyxID-Delegation-Token";

absl::Status Unauthenticated(const char* code, const char* detail) {
  return base::ApiError(absl::StatusCode::kUnauthenticated, code, detail, 401);
}

}  // namespace

std::string_view CredentialKindName(CredentialKind kind) {
  switch (kind) {
    case CredentialKind::kHumanBearer:
      return "HumanBearer";
    case CredentialKind::kAgentKey:
      return "AgentKey";
    case CredentialKind::kProxyDelegation:
      return "ProxyDelegation";
  }
  return "Unknown";
}

IngressAuth::IngressAuth(const NyxidClient* nyxid, base::KeyLookup keys, std::string audience,
                         std::chrono::seconds introspection_cache)
    : nyxid_(nyxid),
      keys_(std::move(keys)),
      audience_(std::move(audience)),
      introspection_cache_(introspection_cache) {}

absl::StatusOr<Caller> IngressAuth::Authenticate(const http::Request& request) {
  if (auto delegation = request.headers.Get(kDelegationHeader);
      delegation && !delegation->empty()) {
    return VerifyJwt(*delegation, /*from_delegation_header=*/true);
  }
  const std::string bearer = http::BearerToken(request).value_or("");
  if (bearer.empty()) {
    return Unauthenticated("CREDENTIAL_MISSING", "an Authorization: Bearer credential is required");
  }
  if (absl::StartsWith(bearer, kAgentKeyPrefix)) return IntrospectAgentKey(bearer);
  return VerifyJwt(bearer, /*from_delegation_header=*/false);
}

absl::StatusOr<Caller> IngressAuth::VerifyJwt(const std::string& token,
                                              bool from_delegation_header) {
  auto verified = base::VerifyJws(token, keys_);
  if (!verified.ok()) return verified.status();
  const nlohmann::json& claims = verified->claims;
  // Signed claims are still outside input: typed reads only. A token_kind of
  // another type reads as no kind and is refused below.
  const std::string kind = base::StringOr(claims, "token_kind", "");
  base::ClaimRequirements requirements;
  requirements.now_unix = base::NowUnixSecs();
  requirements.required_scopes = {kAccountRead};
  Caller caller;
  if (kind == "access" && !from_delegation_header) {
    requirements.token_kind = "access";
    requirements.audience = "nyxid";
    caller.kind = CredentialKind::kHumanBearer;
    caller.write_authority = true;
  } else if (kind == "delegation") {
    requirements.token_kind = "delegation";
    requirements.audience = audience_;
    caller.kind = CredentialKind::kProxyDelegation;
  } else {
    return Unauthenticated("TOKEN_KIND_MISMATCH", "this credential kind is not accepted here");
  }
  if (absl::Status st = base::VerifyClaims(claims, requirements); !st.ok()) return st;
  caller.user_id = base::StringOr(claims, "sub", "");
  if (caller.user_id.empty()) return Unauthenticated("TOKEN_MALFORMED", "the token has no subject");
  // The signature proves who issued it, not that it still stands: NyxID
  // revokes a user's tokens at logout and password change.
  auto subject = Introspected(
      token, caller.kind == CredentialKind::kHumanBearer ? "AccessToken" : "ProxyDelegation",
      "TOKEN_REVOKED");
  if (!subject.ok()) return subject.status();
  if (subject->subject != caller.user_id) {
    return Unauthenticated("TOKEN_REVOKED", "NyxID names another subject for the token");
  }
  caller.credential = token;
  return caller;
}

absl::StatusOr<Caller> IngressAuth::IntrospectAgentKey(const std::string& key) {
  auto answer = Introspected(key, "AgentKey", "AGENT_KEY_INACTIVE");
  if (!answer.ok()) return answer.status();
  return Caller{CredentialKind::kAgentKey, answer->subject, key, false, answer->allowed_services};
}

absl::StatusOr<Introspection> IngressAuth::Introspected(const std::string& credential,
                                                        const std::string& kind,
                                                        const std::string& inactive_code) {
  const std::string digest = base::Sha256Hex(credential);
  const auto now = std::chrono::steady_clock::now();
  {
    absl::MutexLock lock(&mu_);
    if (auto it = introspected_.find(digest); it != introspected_.end() && it->second.until > now) {
      return it->second.answer;
    }
  }
  NyxidReply reply = nyxid_->Introspect(credential);
  if (reply.status == 0 || reply.status >= 500) {
    return base::ApiError(absl::StatusCode::kUnavailable, "NYXID_UNAVAILABLE",
                          "NyxID could not verify the credential; retry later", 503);
  }
  const absl::Status inactive = Unauthenticated(
      inactive_code.c_str(), "NyxID reports the credential unknown, revoked or expired");
  if (reply.status != 200) return inactive;
  // A 200 that breaks the contract proves nothing either way: 502
  // NYXID_RESPONSE_INVALID, never a crash and never an admitted caller.
  auto introspection = ParseIntrospection(reply.body);
  if (!introspection.ok()) return introspection.status();
  if (!introspection->active || introspection->kind != kind || introspection->subject.empty()) {
    return inactive;
  }
  absl::MutexLock lock(&mu_);
  if (introspected_.size() > 10000) introspected_.clear();  // bound the cache
  introspected_[digest] = {*introspection, now + introspection_cache_};
  return introspection;
}

}  // namespace aevatar::orchestrator
