// Login, identity, published keys and introspection.
#include <optional>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/login_throttle.h"
#include "nyxid/api/api_support.h"
#include "nyxid/api/nyxid_metrics.h"
#include "nyxid/routes/caller_facts.h"
#include "nyxid/routes/route_access.h"
#include "nyxid/tokens/agent_keys.h"

namespace aevatar::nyxid {
namespace {

// Verified against when the username is unknown, so a wrong username costs
// the same Argon2id work as a wrong password.
const std::string& DummyHash() {
  static const std::string hash = base::HashPassword(base::RandomId("dummy_")).value_or("");
  return hash;
}

absl::Status LoginFailed() {
  return base::ApiError(absl::StatusCode::kUnauthenticated, "LOGIN_FAILED",
                        "the username or password is wrong", 401);
}

nlohmann::json InactiveToken() { return {{"active", false}}; }

// Where a login attempt comes from, for its throttle: the peer, unless the
// peer is a registered client (aevatar's /ui login) vouching for its own
// client's address in X-Forwarded-For. An unregistered peer cannot choose
// the address it is counted under.
std::string LoginSource(const HttpApiDeps& deps, const http::Request& request) {
  const std::optional<std::string> forwarded = request.headers.Get("X-Forwarded-For");
  const std::optional<std::string> secret = http::BearerToken(request);
  if (!forwarded || !secret) return request.remote_address;
  const bool address =
      !forwarded->empty() && forwarded->size() <= 45 &&
      forwarded->find_first_not_of("0123456789abcdefABCDEF.:") == std::string::npos;
  if (!address || !deps.store->FindClientBySecretHash(base::Sha256Hex(*secret)).ok()) {
    return request.remote_address;
  }
  return *forwarded;
}

}  // namespace

std::optional<http::Response> ThrottledRefusal(const HttpApiDeps& deps, const std::string& name,
                                               const std::string& source, RequestNote& note) {
  base::LoginThrottle* throttle = deps.login_throttle;
  if (throttle == nullptr) return std::nullopt;
  const int64_t wait_ms = throttle->Begin(name, source);
  if (wait_ms == 0) return std::nullopt;
  throttle->Tarpit(wait_ms);
  http::Response refused = Problem(base::LoginThrottledError(), note);
  refused.headers.Set("Retry-After", base::RetryAfterSeconds(wait_ms));
  return refused;
}

bool VerifyPasswordThrottled(const HttpApiDeps& deps, const std::string& hash,
                             const std::string& password) {
  std::optional<base::LoginThrottle::HashSlot> slot;
  if (deps.login_throttle != nullptr) slot.emplace(*deps.login_throttle);
  return base::VerifyPassword(hash, password);
}

http::Response HandleLogin(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  const auto username = body->find("username");
  const auto password = body->find("password");
  if (username == body->end() || !username->is_string() || password == body->end() ||
      !password->is_string()) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "LOGIN_INVALID",
                                  "username and password (strings) are required", 400),
                   note);
  }
  const std::string& name = username->get_ref<const std::string&>();
  const std::string source = LoginSource(deps, request);
  if (auto refused = ThrottledRefusal(deps, name, source, note)) return *std::move(refused);
  auto user = deps.store->FindUserByName(name);
  if (!user.ok() && !absl::IsNotFound(user.status())) return Problem(user.status(), note);
  const bool verified = VerifyPasswordThrottled(deps, user.ok() ? user->password_hash : DummyHash(),
                                                password->get<std::string>());
  if (!user.ok() || !verified) return Problem(LoginFailed(), note);  // Begin counted it
  if (deps.login_throttle != nullptr) deps.login_throttle->Succeeded(name, source);
  note.credential_kind = "password";
  if (deps.metrics != nullptr) deps.metrics->CountTokenMinted("access");
  return Json(200, {{"access_token", deps.tokens->IssueAccess(user->id, user->username,
                                                              user->tokens_not_before_ms)},
                    {"token_type", "Bearer"},
                    {"token_kind", "access"},
                    {"expires_in", kAccessTokenTtlSecs},
                    {"user", {{"id", user->id}, {"username", user->username}}}});
}

absl::StatusOr<nlohmann::json> MeDocument(const HttpApiDeps& deps, const Principal& caller) {
  if (absl::Status st = RequireAccountRead(caller); !st.ok()) return st;
  nlohmann::json orgs = nlohmann::json::array();
  for (const Membership& membership : caller.memberships) {
    auto org = deps.store->FindOrgById(membership.org_id);
    // A store error is an error, never a shorter list: the proxy remembers
    // the digest of this document (caller_facts.h).
    if (absl::IsNotFound(org.status())) continue;
    if (!org.ok()) return org.status();
    orgs.push_back({{"id", org->id},
                    {"slug", org->slug},
                    {"name", org->name},
                    {"role", OrgRoleName(membership.role)}});
  }
  nlohmann::json out = {{"id", caller.user.id},
                        {"username", caller.user.username},
                        {"platform_admin", caller.user.platform_admin},
                        {"credential_kind", CredentialKindName(caller.kind)},
                        {"scopes", JoinScopes(caller.scopes)},
                        {"orgs", orgs}};
  if (caller.agent_key) {
    out["agent_key"] = {{"id", caller.agent_key->id}, {"label", caller.agent_key->label}};
  }
  return out;
}

http::Response HandleMe(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto me = MeDocument(deps, *caller);
  if (!me.ok()) return Problem(me.status(), note);
  return Json(200, *me);
}

http::Response HandleJwks(const HttpApiDeps& deps, http::Request&, RequestNote&) {
  http::Response response =
      http::JsonResponse(200, deps.keys->Published(base::NowUnixSecs()).ToJson());
  response.headers.Set("Cache-Control", "public, max-age=60");
  return response;
}

// RFC 7662-style: the caller is a registered client (Bearer <client secret>)
// or a platform admin with an access token. Unknown, revoked or expired
// credentials are {"active": false} without a reason.
http::Response HandleIntrospect(const HttpApiDeps& deps, http::Request& request,
                                RequestNote& note) {
  auto bearer = http::BearerToken(request);
  if (!bearer) {
    return Problem(base::ApiError(absl::StatusCode::kUnauthenticated, "CREDENTIAL_MISSING",
                                  "a registered client credential is required", 401),
                   note);
  }
  auto client = deps.store->FindClientBySecretHash(base::Sha256Hex(*bearer));
  if (client.ok()) {
    note.credential_kind = "RegisteredClient";
  } else {
    auto caller = Authenticated(deps, request, note);
    if (!caller.ok()) return Problem(caller.status(), note);
    if (caller->kind != CredentialKind::kAccess || !caller->user.platform_admin) {
      return Problem(base::ApiError(absl::StatusCode::kPermissionDenied, "INTROSPECTION_FORBIDDEN",
                                    "only registered services may introspect credentials", 403),
                     note);
    }
  }
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  const auto token = body->find("token");
  if (token == body->end() || !token->is_string() || token->get<std::string>().empty()) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "TOKEN_REQUIRED",
                                  "token (a string) is required", 400),
                   note);
  }
  auto subject = deps.auth->AuthenticateBearer(token->get<std::string>());
  if (!subject.ok()) {
    if (base::HttpStatusFor(subject.status()) >= 500) return Problem(subject.status(), note);
    return Json(200, InactiveToken());
  }
  nlohmann::json out = {{"active", true},
                        {"kind", CredentialKindName(subject->kind)},
                        {"sub", subject->user.id},
                        {"username", subject->user.username},
                        {"scope", JoinScopes(subject->scopes)}};
  if (subject->agent_key) {
    out["key_id"] = subject->agent_key->id;
    out["allowed_services"] = subject->agent_key->allowed_services;
  }
  return Json(200, out);
}

}  // namespace aevatar::nyxid
