#include "aevatar/api/http_api.h"

#include <chrono>

#include "aevatar/admission/route_admission.h"
#include "aevatar/admission/tool_catalog.h"
#include "aevatar/api/aevatar_metrics.h"
#include "aevatar/api/api_support.h"
#include "aevatar/api/trigger_runs.h"
#include "aevatar/api/workflow_admission.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/mcp/mcp_sessions.h"
#include "aevatar/tools/code_execute.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/log.h"
#include "http/problem.h"
#include "metrics/http_metrics.h"

namespace aevatar::orchestrator {
namespace {

http::Response HandleTools(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  return Json(200, ToolCatalogJson(deps.runtimes));
}

http::Response HandleCodeExecute(const HttpApiDeps& deps, http::Request& request,
                                 RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  // Validation happens before any network call.
  auto args = ParseCodeExecuteArgs(request.body);
  if (!args.ok()) return Problem(args.status(), note);
  auto result = ExecuteInteractive(*deps.nyxid, *caller, *args, deps.chrono_catalog_id,
                                   note.diagnostic_id, deps.admissions.get());
  if (!result.ok()) return Problem(result.status(), note);
  return Json(200, *result);
}

http::Response HandleReadiness(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  std::optional<NyxidFacts> facts;
  auto readiness = CodeExecuteReadiness(*deps.nyxid, *caller, deps.chrono_catalog_id,
                                        note.diagnostic_id, &facts);
  // The read is fresh NyxID evidence: the caller's runs learn of revocations.
  ObserveFacts(deps, *caller, facts, note.diagnostic_id);
  if (!readiness.ok()) return Problem(readiness.status(), note);
  (*readiness)["runtimes"] = RuntimeOffersJson(deps.runtimes);
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

http::Response HandleMetrics(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  if (absl::Status st =
          metrics::CheckMetricsReadable(request, deps.metrics_token, deps.metrics != nullptr);
      !st.ok()) {
    return Problem(st, note);
  }
  int64_t pending = -1;
  if (deps.approvals != nullptr) {
    auto counted = deps.approvals->CountPending("", base::NowUnixMs());
    if (counted.ok()) pending = *counted;
  }
  return metrics::MetricsResponse(deps.metrics->Render(pending));
}

}  // namespace

std::unique_ptr<http::Router> BuildHttpApi(const HttpApiDeps& deps) {
  HttpApiDeps filled = deps;
  if (filled.mcp_sessions == nullptr) filled.mcp_sessions = std::make_shared<McpSessions>();
  auto shared = std::make_shared<const HttpApiDeps>(std::move(filled));
  auto router = std::make_unique<http::Router>();
  const AddRoute add(
      [&](const char* method, const char* route, RouteHandler handler, CallerScope scope) {
        router->Add(method, route, Logged(shared, route, handler, scope));
      });
  if (deps.workflows != nullptr) AddWorkflowRoutes(add);
  if (deps.workflows != nullptr && deps.triggers != nullptr) AddTriggerRoutes(add);
  AddCodexRoutes(add);
  if (deps.approvals != nullptr) AddApprovalRoutes(add);
  if (deps.skills != nullptr && deps.workflows != nullptr) AddSkillRoutes(add);
  AddUiRoutes(add);
  AddMcpRoutes(add);
  // The fixed tool schemas, nothing of the user's: what an execution
  // credential needs to call the tools.
  add("GET", "/api/tools", HandleTools, CallerScope::kExecution);
  // NyxID's proxy refuses a restricted key outside its services.
  add("POST", "/api/tools/code_execute", HandleCodeExecute, CallerScope::kExecution);
  add("GET", "/api/capabilities/code_execute/readiness", HandleReadiness);
  add("GET", "/api/info", HandleInfo);
  add("GET", "/healthz", HandleHealth);
  add("GET", "/readyz", HandleReady);
  add("GET", "/metrics", HandleMetrics);
  router->Add("GET", "/openapi.json", http::OpenApiHandler(router.get(), OpenApiFragments()));
  return router;
}

}  // namespace aevatar::orchestrator
