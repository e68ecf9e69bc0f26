// Ending sessions: logout and password change revoke every access and
// delegation token the account holds (tokens issued before the instant are
// refused everywhere NyxID decides, and through introspection at aevatar
// within its documented bound); a platform admin rotates the signing key.
#include <optional>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"
#include "base/login_throttle.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/api/api_support.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {
namespace {

constexpr size_t kMinPasswordBytes = 12;
constexpr size_t kMaxPasswordBytes = 1024;

// Every token of `user` issued until now stops working.
absl::Status RevokeTokens(const HttpApiDeps& deps, User user) {
  user.tokens_not_before_ms = base::NowUnixMs() + 1;
  return deps.store->UpdateUser(user);
}

http::Response NoContent() { return http::Response{204, {}, "", nullptr, nullptr}; }

}  // namespace

http::Response HandleLogout(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  if (absl::Status st = RevokeTokens(deps, caller->user); !st.ok()) return Problem(st, note);
  RecordAdminAction(*deps.store, caller->user.id, "account.logged_out", "account", caller->user.id);
  return NoContent();
}

http::Response HandleChangePassword(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto current = base::RequiredString(*body, "current_password");
  auto next = base::RequiredString(*body, "new_password");
  if (!current.ok() || !next.ok()) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "PASSWORD_CHANGE_INVALID",
                                  "current_password and new_password (strings) are required", 400),
                   note);
  }
  if (next->size() < kMinPasswordBytes || next->size() > kMaxPasswordBytes) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "PASSWORD_TOO_WEAK",
                                  "a password is 12 to 1024 characters", 400),
                   note);
  }
  // The current password is guessed no faster than at the login.
  const std::string& name = caller->user.username;
  if (auto refused = ThrottledRefusal(deps, name, request.remote_address, note)) {
    return *std::move(refused);
  }
  const bool verified = VerifyPasswordThrottled(deps, caller->user.password_hash, *current);
  if (!verified) {  // Begin counted it
    return Problem(base::ApiError(absl::StatusCode::kPermissionDenied, "PASSWORD_WRONG",
                                  "the current password is wrong", 403),
                   note);
  }
  if (deps.login_throttle != nullptr) deps.login_throttle->Succeeded(name, request.remote_address);
  auto hash = base::HashPassword(*next);
  if (!hash.ok()) return Problem(hash.status(), note);
  User user = caller->user;
  user.password_hash = *hash;
  if (absl::Status st = RevokeTokens(deps, user); !st.ok()) return Problem(st, note);
  RecordAdminAction(*deps.store, user.id, "account.password_changed", "account", user.id);
  return NoContent();
}

http::Response HandleRotateSigningKey(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequirePlatformAdmin(*caller, "rotate the signing key"); !st.ok()) {
    return Problem(st, note);
  }
  const std::string previous = deps.keys->current_kid();
  if (absl::Status st = deps.keys->Rotate(base::NowUnixSecs()); !st.ok()) {
    return Problem(st, note);
  }
  const std::string current = deps.keys->current_kid();
  RecordAdminAction(*deps.store, caller->user.id, "signing_key.rotated", "signing_key", current,
                    {{"previous_kid", previous}});
  return Json(200, {{"kid", current}, {"previous_kid", previous}});
}

}  // namespace aevatar::nyxid
