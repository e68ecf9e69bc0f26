#include "nyxid/tokens/authenticator.h"

#include "absl/strings/match.h"
#include "base/api_error.h"
#include "nyxid/tokens/agent_keys.h"

namespace aevatar::nyxid {
namespace {

absl::Status Unauthenticated(std::string code, std::string detail) {
  return base::ApiError(absl::StatusCode::kUnauthenticated, std::move(code), std::move(detail),
                        401);
}

}  // namespace

absl::StatusOr<Principal> Authenticator::Authenticate(const http::Request& request) const {
  return Authenticate(request, *store_);
}

absl::StatusOr<Principal> Authenticator::Authenticate(const http::Request& request,
                                                      FactsReads& reads) const {
  auto bearer = http::BearerToken(request);
  if (!bearer) {
    return Unauthenticated("CREDENTIAL_MISSING", "an Authorization: Bearer credential is required");
  }
  return AuthenticateBearer(*bearer, reads);
}

absl::StatusOr<Principal> Authenticator::AuthenticateBearer(std::string_view bearer) const {
  return AuthenticateBearer(bearer, *store_);
}

absl::StatusOr<Principal> Authenticator::ForUser(const std::string& user_id, FactsReads& reads) {
  auto user = reads.FindUserById(user_id);
  if (absl::IsNotFound(user.status())) {
    return Unauthenticated("ACCOUNT_UNKNOWN", "the credential's account does not exist");
  }
  if (!user.ok()) return user.status();
  auto memberships = reads.MembershipsOfUser(user_id);
  if (!memberships.ok()) return memberships.status();
  Principal principal;
  principal.user = std::move(*user);
  principal.memberships = std::move(*memberships);
  return principal;
}

absl::StatusOr<Principal> Authenticator::AuthenticateBearer(std::string_view bearer,
                                                            FactsReads& reads) const {
  if (absl::StartsWith(absl::string_view(bearer.data(), bearer.size()), kAgentKeyPrefix)) {
    if (!LooksLikeAgentKey(bearer)) {
      return Unauthenticated("AGENT_KEY_INVALID", "the agent key is not valid");
    }
    auto key = reads.FindAgentKeyByHash(AgentKeyHash(bearer));
    if (absl::IsNotFound(key.status())) {
      return Unauthenticated("AGENT_KEY_INVALID", "the agent key is not valid");
    }
    if (!key.ok()) return key.status();
    if (key->revoked_at_ms) {
      return Unauthenticated("AGENT_KEY_REVOKED", "the agent key has been revoked");
    }
    auto principal = ForUser(key->user_id, reads);
    if (!principal.ok()) return principal.status();
    principal->kind = CredentialKind::kAgentKey;
    principal->agent_key = std::move(*key);
    principal->credential = std::string(bearer);
    return principal;
  }
  auto token = tokens_->Verify(bearer);
  if (!token.ok()) return token.status();
  auto principal = ForUser(token->subject, reads);
  if (!principal.ok()) return principal.status();
  if (token->issued_at_ms < principal->user.tokens_not_before_ms) {
    return Unauthenticated("TOKEN_REVOKED",
                           "the token was revoked (its account logged out or changed password)");
  }
  principal->kind = token->kind == "access" ? CredentialKind::kAccess : CredentialKind::kDelegation;
  principal->scopes = std::move(token->scopes);
  if (principal->kind == CredentialKind::kDelegation) principal->audience = token->audience;
  principal->credential = std::string(bearer);
  return principal;
}

}  // namespace aevatar::nyxid
