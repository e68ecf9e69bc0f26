#include "chrono/http_api.h"

#include <chrono>

#include "base/api_error.h"
#include "base/log.h"
#include "chrono/api_support.h"
#include "chrono/execute_request.h"
#include "chrono/execute_result.h"
#include "http/problem.h"
#include "metrics/http_metrics.h"

namespace aevatar::chrono {

http::Response Problem(const absl::Status& status, RequestNote& note) {
  note.code = base::ApiCode(status);
  note.diagnostic_id = http::NewDiagnosticId();
  return http::ProblemResponse(status, note.diagnostic_id);
}

const std::vector<sandbox::RuntimeEnv>& DeclaredRuntimes(const ApiContext& ctx) {
  static const std::vector<sandbox::RuntimeEnv> kNone;
  return ctx.deps.runtimes != nullptr ? *ctx.deps.runtimes : kNone;
}

http::Response Json(int status, const nlohmann::json& body) {
  return http::JsonResponse(status,
                            body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

namespace {

using Clock = std::chrono::steady_clock;
using RouteHandler = http::Response (*)(const ApiContext&, http::Request&, RequestNote&);

http::Response HandleExecute(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto parsed = ParseExecuteRequest(request.body, DeclaredRuntimes(ctx));
  if (!parsed.ok()) return Problem(parsed.status(), note);
  sandbox::RunSpec spec = ToRunSpec(*parsed);
  spec.server_env = ServerEnvFor(*caller, ctx.options.nyxid_base_url);
  auto result = ctx.deps.executor->RunSync(std::move(spec));
  if (!result.ok()) {
    http::Response response = Problem(result.status(), note);
    if (response.status == 429) response.headers.Set("Retry-After", "1");
    if (response.status >= 500) {
      base::Log(base::LogLevel::kError, "execute.sandbox_failure", note.diagnostic_id,
                {{"error", std::string(result.status().message())}});
    }
    return response;
  }
  ctx.deps.metrics->CountRun(std::string(sandbox::VerdictName(result->verdict)),
                             static_cast<double>(result->wall_ms) / 1000.0);
  return Json(200, ExecuteResultJson(*result));
}

http::Response HandleHealth(const ApiContext&, http::Request&, RequestNote&) {
  return Json(200, {{"status", "ok"}});
}

http::Response HandleReady(const ApiContext& ctx, http::Request&, RequestNote& note) {
  absl::Status store = ctx.deps.store->Ping();
  if (!store.ok() || !ctx.deps.engine_ready) {
    return Problem(base::ApiError(absl::StatusCode::kUnavailable, "NOT_READY",
                                  !store.ok() ? "the operation store is unreachable"
                                              : "the sandbox engine self-check failed",
                                  503),
                   note);
  }
  nlohmann::json body = {{"status", "ready"}, {"async_enabled", ctx.options.async_enabled}};
  // The managed Codex runner is optional: its state is reported, not required.
  const absl::Status codex =
      ctx.deps.codex ? ctx.deps.codex->Availability()
                     : absl::UnavailableError("the managed Codex runner is not configured");
  body["codex"] = {{"available", codex.ok()}};
  if (!codex.ok()) body["codex"]["reason"] = std::string(codex.message());
  // Names and languages only: a root is the operator's host path.
  body["runtimes"] = nlohmann::json::array();
  for (const sandbox::RuntimeEnv& env : DeclaredRuntimes(ctx)) {
    body["runtimes"].push_back(
        {{"name", env.name}, {"language", sandbox::LanguageName(env.language)}});
  }
  return Json(200, body);
}

http::Response HandleMetrics(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  if (absl::Status st = metrics::CheckMetricsReadable(request, ctx.options.metrics_token,
                                                      ctx.deps.metrics != nullptr);
      !st.ok()) {
    return Problem(st, note);
  }
  return metrics::MetricsResponse(ctx.deps.metrics->Render(
      ctx.deps.executor->queued(), ctx.deps.executor->running(),
      ctx.deps.codex ? ctx.deps.codex->running() : 0,
      ctx.deps.warm_python_stats ? ctx.deps.warm_python_stats() : sandbox::WarmPythonStats{}));
}

// Wraps a handler with the per-request log line and metrics.
http::Handler Logged(std::shared_ptr<const ApiContext> ctx, std::string route,
                     RouteHandler handler) {
  return [ctx, route = std::move(route), handler](http::Request& request) {
    const Clock::time_point start = Clock::now();
    RequestNote note;
    http::Response response = handler(*ctx, request, note);
    const Clock::duration took = Clock::now() - start;
    ctx->deps.metrics->CountRequest(route, response.status,
                                    std::chrono::duration<double>(took).count());
    nlohmann::json fields = {
        {"route", route},
        {"status", response.status},
        {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()},
    };
    if (!note.operation_id.empty()) fields["operation_id"] = note.operation_id;
    if (!note.code.empty()) fields["code"] = note.code;
    if (!note.diagnostic_id.empty()) fields["diagnostic_id"] = note.diagnostic_id;
    base::Log(base::LogLevel::kInfo, "http.request", note.diagnostic_id, fields);
    return response;
  };
}

}  // namespace

std::unique_ptr<http::Router> BuildHttpApi(const HttpApiOptions& options, const HttpApiDeps& deps) {
  auto ctx = std::make_shared<const ApiContext>(ApiContext{options, deps});
  auto router = std::make_unique<http::Router>();
  auto add = [&](const char* method, const char* route, RouteHandler handler) {
    router->Add(method, route, Logged(ctx, route, handler));
  };
  add("POST", "/execute", HandleExecute);
  add("POST", "/executions", HandleSubmit);
  add("GET", "/executions", HandleListExecutions);
  add("GET", "/executions/{id}", HandleStatus);
  add("GET", "/executions/{id}/result", HandleResult);
  add("POST", "/executions/{id}/cancel", HandleCancel);
  add("POST", "/codex/execute", HandleCodexExecute);
  add("POST", "/codex/runs/{run_id}/cancel", HandleCodexCancel);
  add("GET", "/healthz", HandleHealth);
  add("GET", "/readyz", HandleReady);
  add("GET", "/metrics", HandleMetrics);
  router->Add("GET", "/openapi.json", http::OpenApiHandler(router.get(), OpenApiFragments()));
  return router;
}

}  // namespace aevatar::chrono
