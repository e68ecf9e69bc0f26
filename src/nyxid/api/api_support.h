#ifndef AEVATAR_NYXID_API_API_SUPPORT_H_
#define AEVATAR_NYXID_API_API_SUPPORT_H_

// Shared plumbing of the broker's HTTP handlers (private to src/nyxid).

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "http/message.h"
#include "nlohmann/json.hpp"
#include "nyxid/api/http_api.h"
#include "nyxid/model.h"
#include "nyxid/tokens/authenticator.h"

namespace aevatar::nyxid {

// What the per-request log line says besides route and status. Never a
// credential, a route id or a request body.
struct RequestNote {
  std::string code;
  std::string diagnostic_id;
  std::string credential_kind;
  int upstream_status = 0;
  // Seconds the upstream took to answer (proxy); < 0 when none was asked.
  double upstream_seconds = -1;
};

// A problem+json response for `status`, with a fresh diagnostic id noted for
// the log line.
http::Response Problem(const absl::Status& status, RequestNote& note);
http::Response Json(int status, const nlohmann::json& body);
// `body` as Json() serves it (invalid UTF-8 replaced, never a throw).
std::string JsonText(const nlohmann::json& body);
// `response` marked Cache-Control: no-store (it shows a secret once).
http::Response NoStore(http::Response response);

// The request body as a JSON object; 400 BODY_INVALID otherwise. An empty
// body is an empty object.
absl::StatusOr<nlohmann::json> JsonObjectBody(const http::Request& request);

// Authenticates the caller and notes its credential kind; with `reads`, the
// caller's account, memberships and Agent Key are read through them.
absl::StatusOr<Principal> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                        RequestNote& note, FactsReads* reads = nullptr);

// A password check under the login throttle (base/login_throttle.h) for
// account `name` from `source`: nullopt when the attempt is let in (it then
// counts as a failure until LoginThrottle::Succeeded), else the 429
// LOGIN_THROTTLED answer with Retry-After, given after the tarpit.
std::optional<http::Response> ThrottledRefusal(const HttpApiDeps& deps, const std::string& name,
                                               const std::string& source, RequestNote& note);
// Verifies `password` against `hash` holding one of the throttle's hashing
// slots (all cores are never spent on Argon2id).
bool VerifyPasswordThrottled(const HttpApiDeps& deps, const std::string& hash,
                             const std::string& password);

// A UserService as the API shows it. `auto_connected` and `usable` are only
// set on /keys entries.
nlohmann::json UserServiceJson(const UserService& route, const std::string& catalog_slug,
                               std::optional<bool> auto_connected, std::optional<bool> usable);

nlohmann::json PolicyJson(const CredentialPolicy& policy);

// Handlers, by file.
// account_api.cc
http::Response HandleLogin(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleMe(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleJwks(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleIntrospect(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
// api/admin_audit.cc
http::Response HandleListAdminAudit(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
// accounts/session_api.cc
http::Response HandleLogout(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleChangePassword(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
http::Response HandleRotateSigningKey(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note);
// agent_keys_api.cc
http::Response HandleCreateAgentKey(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
http::Response HandleListAgentKeys(const HttpApiDeps& deps, http::Request& request,
                                   RequestNote& note);
http::Response HandleRevokeAgentKey(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
// routes_api.cc
http::Response HandleKeys(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleListUserServices(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note);
http::Response HandleGetUserService(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
http::Response HandleCreateUserService(const HttpApiDeps& deps, http::Request& request,
                                       RequestNote& note);
http::Response HandlePutUserService(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
http::Response HandleResyncIdentity(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note);
http::Response HandleCatalog(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
// proxy_api.cc
http::Response HandleProxy(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
// nodes/nodes_api.cc
http::Response HandleNodeRegisterToken(const HttpApiDeps& deps, http::Request& request,
                                       RequestNote& note);
http::Response HandleNodeRegister(const HttpApiDeps& deps, http::Request& request,
                                  RequestNote& note);
http::Response HandleListNodes(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleDeleteNode(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
http::Response HandleNodeSocket(const HttpApiDeps& deps, http::Request& request, RequestNote& note);
// nodes/ssh_api.cc
http::Response HandleAddSshService(const HttpApiDeps& deps, http::Request& request,
                                   RequestNote& note);
http::Response HandleSshExec(const HttpApiDeps& deps, http::Request& request, RequestNote& note);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_API_API_SUPPORT_H_
