#include "nyxid/api/http_api.h"

#include <chrono>

#include "base/api_error.h"
#include "base/json_read.h"
#include "base/log.h"
#include "http/problem.h"
#include "metrics/http_metrics.h"
#include "nyxid/api/api_support.h"
#include "nyxid/api/nyxid_metrics.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {

http::Response Problem(const absl::Status& status, RequestNote& note) {
  note.code = base::ApiCode(status);
  note.diagnostic_id = http::NewDiagnosticId();
  if (base::HttpStatusFor(status) >= 500) {
    // The message of an internal error may name a file or a statement, never
    // a value; it goes to the log, the caller sees the same text.
    base::Log(base::LogLevel::kError, "nyxid.error", note.diagnostic_id,
              {{"code", note.code}, {"error", std::string(status.message())}});
  }
  return http::ProblemResponse(status, note.diagnostic_id);
}

std::string JsonText(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

http::Response Json(int status, const nlohmann::json& body) {
  return http::JsonResponse(status, JsonText(body));
}

http::Response NoStore(http::Response response) {
  response.headers.Set("Cache-Control", "no-store");
  return response;
}

absl::StatusOr<nlohmann::json> JsonObjectBody(const http::Request& request) {
  if (request.body.empty()) return nlohmann::json::object();
  // Depth-bounded and non-throwing (base/json_read.h).
  auto body = base::ParseJsonObject(request.body);
  if (!body.ok()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "BODY_INVALID",
                          "the request body must be a JSON object", 400);
  }
  return body;
}

absl::StatusOr<Principal> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                        RequestNote& note, FactsReads* reads) {
  auto principal = reads != nullptr ? deps.auth->Authenticate(request, *reads)
                                    : deps.auth->Authenticate(request);
  if (principal.ok()) note.credential_kind = std::string(CredentialKindName(principal->kind));
  return principal;
}

nlohmann::json PolicyJson(const CredentialPolicy& policy) {
  return {{"forward_access_token", policy.forward_access_token},
          {"inject_delegation_token", policy.inject_delegation_token},
          {"delegation_token_scope", JoinScopes(policy.delegation_token_scope)}};
}

nlohmann::json UserServiceJson(const UserService& route, const std::string& catalog_slug,
                               std::optional<bool> auto_connected, std::optional<bool> usable) {
  nlohmann::json out = {
      {"id", route.id},
      {"slug", route.slug},
      {"label", route.label},
      {"catalog_service_id",
       route.catalog_service_id ? nlohmann::json(*route.catalog_service_id) : nullptr},
      {"catalog_slug",
       catalog_slug.empty() ? nlohmann::json(nullptr) : nlohmann::json(catalog_slug)},
      {"owner", {{"type", OwnerKindName(route.owner.kind)}, {"id", route.owner.id}}},
      {"active", route.active},
      {"forward_access_token", route.policy.forward_access_token},
      {"inject_delegation_token", route.policy.inject_delegation_token},
      {"delegation_token_scope", JoinScopes(route.policy.delegation_token_scope)},
      {"credential_source", {{"allowed", route.credential_source_allowed}}},
      {"node_id", route.node_id ? nlohmann::json(*route.node_id) : nullptr},
      {"created_at_ms", route.created_at_ms},
      {"updated_at_ms", route.updated_at_ms},
  };
  if (auto_connected) out["auto_connected"] = *auto_connected;
  if (usable) out["usable"] = *usable;
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
using RouteHandler = http::Response (*)(const HttpApiDeps&, http::Request&, RequestNote&);

http::Response HandleHealth(const HttpApiDeps&, http::Request&, RequestNote&) {
  return Json(200, {{"status", "ok"}});
}

http::Response HandleReady(const HttpApiDeps& deps, http::Request&, RequestNote& note) {
  if (absl::Status st = deps.store->Ping(); !st.ok()) {
    return Problem(base::ApiError(absl::StatusCode::kUnavailable, "NOT_READY",
                                  "the store is unreachable", 503),
                   note);
  }
  return Json(200, {{"status", "ready"}});
}

http::Response HandleMetrics(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  if (absl::Status st =
          metrics::CheckMetricsReadable(request, deps.metrics_token, deps.metrics != nullptr);
      !st.ok()) {
    return Problem(st, note);
  }
  return metrics::MetricsResponse(deps.metrics->Render());
}

// Wraps a handler with the per-request log line.
http::Handler Logged(std::shared_ptr<const HttpApiDeps> deps, std::string route,
                     RouteHandler handler) {
  return [deps, route = std::move(route), handler](http::Request& request) {
    const Clock::time_point start = Clock::now();
    RequestNote note;
    http::Response response = handler(*deps, request, note);
    const Clock::duration took = Clock::now() - start;
    if (deps->metrics != nullptr) {
      deps->metrics->CountRequest(route, response.status, note.code,
                                  std::chrono::duration<double>(took).count());
      if (note.upstream_seconds >= 0) deps->metrics->ObserveUpstream(note.upstream_seconds);
    }
    nlohmann::json fields = {
        {"method", request.method},
        {"route", route},
        {"status", response.status},
        {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()},
    };
    if (!note.credential_kind.empty()) fields["credential_kind"] = note.credential_kind;
    if (!note.code.empty()) fields["code"] = note.code;
    if (!note.diagnostic_id.empty()) fields["diagnostic_id"] = note.diagnostic_id;
    if (note.upstream_status != 0) fields["upstream_status"] = note.upstream_status;
    if (response.stream) fields["streamed"] = true;
    base::Log(base::LogLevel::kInfo, "http.request", note.diagnostic_id, fields);
    return response;
  };
}

}  // namespace

std::unique_ptr<http::Router> BuildHttpApi(const HttpApiDeps& deps) {
  auto own = std::make_shared<HttpApiDeps>(deps);
  if (own->cached_facts == nullptr) own->cached_facts = std::make_shared<CachedFacts>(own->store);
  std::shared_ptr<const HttpApiDeps> shared = std::move(own);
  auto router = std::make_unique<http::Router>();
  auto add = [&](const char* method, const char* route, RouteHandler handler) {
    router->Add(method, route, Logged(shared, route, handler));
  };
  add("POST", "/api/v1/auth/login", HandleLogin);
  add("POST", "/api/v1/auth/logout", HandleLogout);
  add("POST", "/api/v1/auth/password", HandleChangePassword);
  add("POST", "/api/v1/admin/signing-keys/rotate", HandleRotateSigningKey);
  add("GET", "/api/v1/admin/audit", HandleListAdminAudit);
  add("GET", "/api/v1/me", HandleMe);
  add("GET", "/.well-known/jwks.json", HandleJwks);
  add("POST", "/api/v1/tokens/introspect", HandleIntrospect);
  add("POST", "/api/v1/agent-keys", HandleCreateAgentKey);
  add("GET", "/api/v1/agent-keys", HandleListAgentKeys);
  add("DELETE", "/api/v1/agent-keys/{id}", HandleRevokeAgentKey);
  add("GET", "/api/v1/keys", HandleKeys);
  add("GET", "/api/v1/user-services", HandleListUserServices);
  add("POST", "/api/v1/user-services", HandleCreateUserService);
  add("GET", "/api/v1/user-services/{id}", HandleGetUserService);
  add("PUT", "/api/v1/user-services/{id}", HandlePutUserService);
  add("POST", "/api/v1/services/{id}/resync-identity", HandleResyncIdentity);
  add("GET", "/api/v1/catalog", HandleCatalog);
  // HEAD reaches the GET registration (the router falls back to it) and is
  // forwarded as HEAD. The rest segment also matches an empty path.
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    add(method, "/api/v1/proxy/{slug}/{path...}", HandleProxy);
  }
  if (deps.nodes != nullptr && deps.hub != nullptr) {
    add("POST", "/api/v1/nodes/register-token", HandleNodeRegisterToken);
    add("POST", "/api/v1/nodes/register", HandleNodeRegister);
    add("GET", "/api/v1/nodes", HandleListNodes);
    add("DELETE", "/api/v1/nodes/{id}", HandleDeleteNode);
    add("GET", "/api/v1/nodes/ws", HandleNodeSocket);
    add("POST", "/api/v1/ssh-services", HandleAddSshService);
    add("POST", "/api/v1/ssh/{service}/exec", HandleSshExec);
  }
  add("GET", "/healthz", HandleHealth);
  add("GET", "/readyz", HandleReady);
  add("GET", "/metrics", HandleMetrics);
  router->Add("GET", "/openapi.json", http::OpenApiHandler(router.get(), OpenApiFragments()));
  return router;
}

}  // namespace aevatar::nyxid
