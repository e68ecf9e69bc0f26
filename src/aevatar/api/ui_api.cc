// The /ui page: its three files, compiled in, and the password login it
// offers (forwarded to NyxID; aevatar keeps nothing). The page calls the
// same /api routes as the CLI with the access token as a bearer, so it has
// no cookie to forge; the CSP allows only this origin's script, style and
// fetches, and no framing.
#include "aevatar/api/api_support.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/ui/ui_assets.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "base/login_throttle.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr size_t kMaxCredentialChars = 256;

constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

http::Response Asset(const char* content_type, const char* body) {
  http::Response response;
  response.status = 200;
  response.headers.Set("Content-Type", content_type);
  response.headers.Set("Content-Security-Policy", kContentSecurityPolicy);
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("X-Frame-Options", "DENY");
  response.headers.Set("Referrer-Policy", "no-referrer");
  response.headers.Set("Cache-Control", "no-cache");
  response.body = body;
  return response;
}

http::Response HandleIndex(const HttpApiDeps&, http::Request&, RequestNote&) {
  return Asset("text/html; charset=utf-8", ui::kIndexHtml);
}

http::Response HandleAppJs(const HttpApiDeps&, http::Request&, RequestNote&) {
  return Asset("text/javascript; charset=utf-8", ui::kAppJs);
}

http::Response HandleStyleCss(const HttpApiDeps&, http::Request&, RequestNote&) {
  return Asset("text/css; charset=utf-8", ui::kStyleCss);
}

absl::Status LoginInvalid(std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "LOGIN_REQUEST_INVALID",
                        std::move(detail), 400);
}

// POST /ui/login {"username", "password"} -> {"access_token", "expires_in"}.
// JSON only: a cross-site form cannot send it without a CORS preflight,
// which aevatar never answers.
http::Response HandleLogin(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  const std::string type = request.headers.Get("Content-Type").value_or("");
  if (type.rfind("application/json", 0) != 0) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "UNSUPPORTED_MEDIA_TYPE",
                                  "send the login as application/json", 415),
                   note);
  }
  auto body = base::ParseJsonObject(request.body);
  if (!body.ok()) return Problem(LoginInvalid("the body must be a JSON object"), note);
  auto username = base::RequiredString(*body, "username");
  auto password = base::RequiredString(*body, "password");
  if (!username.ok() || !password.ok() || username->empty() || password->empty() ||
      username->size() > kMaxCredentialChars || password->size() > kMaxCredentialChars) {
    return Problem(LoginInvalid("username and password are 1 to 256 characters"), note);
  }
  base::LoginThrottle* throttle = deps.ui_login_throttle;
  if (throttle != nullptr) {
    if (const int64_t wait_ms = throttle->RetryAfterMs(*username, request.remote_address);
        wait_ms > 0) {
      http::Response refused = Problem(base::LoginThrottledError(), note);
      refused.headers.Set("Retry-After", base::RetryAfterSeconds(wait_ms));
      return refused;
    }
  }
  const NyxidReply reply = deps.nyxid->Login(*username, *password, request.remote_address);
  if (throttle != nullptr && (reply.status == 401 || reply.status == 403)) {
    throttle->RecordFailure(*username, request.remote_address);
  }
  if (throttle != nullptr && reply.status == 200) throttle->RecordSuccess(*username);
  if (reply.status == 429) {
    http::Response throttled = Problem(base::LoginThrottledError(), note);
    // NyxID's seconds, if they are plain seconds (its bytes are not trusted).
    std::string wait = reply.headers.Get("Retry-After").value_or("");
    if (wait.empty() || wait.size() > 5 ||
        wait.find_first_not_of("0123456789") != std::string::npos) {
      wait = "60";
    }
    throttled.headers.Set("Retry-After", wait);
    return throttled;
  }
  if (reply.status == 401 || reply.status == 403) {
    return Problem(base::ApiError(absl::StatusCode::kUnauthenticated, "LOGIN_FAILED",
                                  "NyxID refused these credentials", 401),
                   note);
  }
  if (reply.status != 200) {
    return Problem(base::ApiError(absl::StatusCode::kUnavailable, "NYXID_UNAVAILABLE",
                                  "NyxID did not complete the login", 502),
                   note);
  }
  auto token = base::RequiredString(reply.body, "access_token");
  if (!token.ok() || token->empty()) {
    return Problem(NyxidResponseInvalid(
                       "login", token.ok() ? absl::InvalidArgumentError("access_token is empty")
                                           : token.status()),
                   note);
  }
  return NoStore(Json(
      200, {{"access_token", *token}, {"expires_in", base::IntOr(reply.body, "expires_in", 0)}}));
}

}  // namespace

base::LoginThrottleOptions UiLoginThrottleOptions() {
  base::LoginThrottleOptions options;
  options.source_free_failures = 5;
  return options;
}

void AddUiRoutes(const AddRoute& add) {
  add("GET", "/ui", HandleIndex);
  add("GET", "/ui/", HandleIndex);
  add("GET", "/ui/app.js", HandleAppJs);
  add("GET", "/ui/style.css", HandleStyleCss);
  add("POST", "/ui/login", HandleLogin);
}

}  // namespace aevatar::orchestrator
