#include "aevatar/http_api.h"

#include <chrono>

#include "aevatar/code_execute.h"
#include "aevatar/route_admission.h"
#include "aevatar/tool_catalog.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {
namespace {

using Clock = std::chrono::steady_clock;

struct RequestNote {
  std::string diagnostic_id = http::NewDiagnosticId();
  std::string code;
  std::string credential_kind;
};

using RouteHandler = http::Response (*)(const HttpApiDeps&, http::Request&, RequestNote&);

http::Response Json(int status, const nlohmann::json& body) {
  return http::JsonResponse(status,
                            body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

http::Response Problem(const absl::Status& status, RequestNote& note) {
  note.code = base::ApiCode(status);
  http::Response response = http::ProblemResponse(status, note.diagnostic_id);
  if (std::string remediation = RemediationOf(status); !remediation.empty()) {
    nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object()) {
      body["remediation"] = remediation;
      response.body = body.dump();
    }
  }
  return response;
}

absl::StatusOr<Caller> Authenticated(const HttpApiDeps& deps, const http::Request& request,
                                     RequestNote& note) {
  auto caller = deps.auth->Authenticate(request);
  if (caller.ok()) note.credential_kind = std::string(CredentialKindName(caller->kind));
  return caller;
}

http::Response HandleTools(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  return Json(200, ToolCatalogJson());
}

http::Response HandleCodeExecute(const HttpApiDeps& deps, http::Request& request,
                                 RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  // Validation happens before any network call.
  auto args = ParseCodeExecuteArgs(request.body);
  if (!args.ok()) return Problem(args.status(), note);
  auto result =
      ExecuteInteractive(*deps.nyxid, *caller, *args, deps.chrono_catalog_id, note.diagnostic_id);
  if (!result.ok()) return Problem(result.status(), note);
  return Json(200, *result);
}

http::Response HandleReadiness(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto readiness =
      CodeExecuteReadiness(*deps.nyxid, *caller, deps.chrono_catalog_id, note.diagnostic_id);
  if (!readiness.ok()) return Problem(readiness.status(), note);
  return Json(200, *readiness);
}

// Public: where clients log in (NyxID issues aevatar's credentials).
http::Response HandleInfo(const HttpApiDeps& deps, http::Request&, RequestNote&) {
  return Json(200, {{"service", "aevatar"}, {"nyxid_url", deps.nyxid->base_url()}});
}

http::Response HandleHealth(const HttpApiDeps&, http::Request&, RequestNote&) {
  return Json(200, {{"status", "ok"}});
}

http::Response HandleReady(const HttpApiDeps& deps, http::Request&, RequestNote& note) {
  if (!deps.nyxid->FetchJwks().ok()) {
    return Problem(
        base::ApiError(absl::StatusCode::kUnavailable, "NOT_READY", "NyxID is unreachable", 503),
        note);
  }
  return Json(200, {{"status", "ready"}});
}

http::Handler Logged(std::shared_ptr<const HttpApiDeps> deps, std::string route,
                     RouteHandler handler) {
  return [deps, route = std::move(route), handler](http::Request& request) {
    const Clock::time_point start = Clock::now();
    RequestNote note;
    http::Response response = handler(*deps, request, note);
    nlohmann::json fields = {
        {"route", route},
        {"status", response.status},
        {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()},
    };
    if (!note.credential_kind.empty()) fields["credential_kind"] = note.credential_kind;
    if (!note.code.empty()) {
      fields["code"] = note.code;
      fields["diagnostic_id"] = note.diagnostic_id;
    }
    base::Log(base::LogLevel::kInfo, "http.request", note.diagnostic_id, fields);
    return response;
  };
}

}  // namespace

std::unique_ptr<http::Router> BuildHttpApi(const HttpApiDeps& deps) {
  auto shared = std::make_shared<const HttpApiDeps>(deps);
  auto router = std::make_unique<http::Router>();
  auto add = [&](const char* method, const char* route, RouteHandler handler) {
    router->Add(method, route, Logged(shared, route, handler));
  };
  add("GET", "/api/tools", HandleTools);
  add("POST", "/api/tools/code_execute", HandleCodeExecute);
  add("GET", "/api/capabilities/code_execute/readiness", HandleReadiness);
  add("GET", "/api/info", HandleInfo);
  add("GET", "/healthz", HandleHealth);
  add("GET", "/readyz", HandleReady);
  return router;
}

}  // namespace aevatar::orchestrator
