// POST /codex/execute and POST /codex/runs/{run_id}/cancel: the managed
// Codex runner's HTTP face (DESIGN §6).
#include <string>

#include "base/api_error.h"
#include "base/log.h"
#include "chrono/api_support.h"
#include "chrono/codex/codex_events.h"
#include "chrono/codex/codex_request.h"

namespace aevatar::chrono {
namespace {

using base::ApiError;

constexpr size_t kMaxBodyBytes = 128 << 10;
// Room kept under kMaxBodyBytes for the members other than `output`.
constexpr size_t kBodySlack = 4 << 10;
constexpr char kBusyRetryAfterSecs[] = "5";

nlohmann::json ResultJson(const CodexRunResult& result, std::string_view output) {
  return {
      {"status", result.status},
      {"target", "managed_sandbox"},
      {"output", output},
      {"exit_code", result.exit_code},
      {"diagnostic_id", result.diagnostic_id},
      {"elapsed_ms", result.elapsed_ms},
  };
}

// The 200 body, under kMaxBodyBytes even when escaping inflates the output
// (a control character becomes six bytes): the output is cut further then.
std::string ResultBody(const CodexRunResult& result) {
  std::string_view output = result.output;
  for (;;) {
    std::string body = ResultJson(result, output).dump();
    if (body.size() < kMaxBodyBytes || output.empty()) return body;
    const size_t excess = body.size() - (kMaxBodyBytes - kBodySlack);
    output = Utf8Prefix(output, output.size() > excess ? output.size() - excess : 0);
  }
}

}  // namespace

http::Response HandleCodexExecute(const ApiContext& ctx, http::Request& request,
                                  RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kCodexScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto parsed = ParseCodexRequest(request.body);
  if (!parsed.ok()) return Problem(parsed.status(), note);
  auto key = request.headers.Get("Idempotency-Key");
  if (key && (key->empty() || key->size() > kMaxIdempotencyKeyLength)) {
    return Problem(ApiError(absl::StatusCode::kInvalidArgument, "IDEMPOTENCY_KEY_INVALID",
                            "the Idempotency-Key header must be 1..255 characters"),
                   note);
  }
  CodexRunner* runner = ctx.deps.codex;
  if (runner == nullptr || ctx.deps.codex_attach == nullptr) {
    return Problem(ApiError(absl::StatusCode::kUnavailable, "CODEX_RUNNER_UNAVAILABLE",
                            "the managed Codex runner is not configured", 503),
                   note);
  }
  if (absl::Status st = runner->Availability(); !st.ok()) return Problem(st, note);

  // Authenticate proved the header is there. Only the relay uses it, on
  // its requests to NyxID (never the sandbox, a log or a response).
  const std::string token = *request.headers.Get(kDelegationTokenHeader);
  auto run = [&] { return runner->Run(*parsed, token, caller->owner); };
  absl::StatusOr<CodexRunResult> result =
      key ? ctx.deps.codex_attach->RunOnce(caller->owner, *key, CodexRequestFingerprint(*parsed),
                                           run)
          : run();
  if (!result.ok()) {
    http::Response response = Problem(result.status(), note);
    if (response.status == 429) response.headers.Set("Retry-After", kBusyRetryAfterSecs);
    if (response.status >= 500 && response.status != 503) {
      base::Log(base::LogLevel::kError, "codex.sandbox_failure", note.diagnostic_id,
                {{"error", std::string(result.status().message())}});
    }
    return response;
  }
  note.diagnostic_id = result->diagnostic_id;
  ctx.deps.metrics->CountCodexRun(result->status);
  base::Log(base::LogLevel::kInfo, "codex.run", result->diagnostic_id,
            {{"status", result->status},
             {"exit_code", result->exit_code},
             {"verdict", result->verdict},
             {"elapsed_ms", result->elapsed_ms},
             {"output_bytes", result->output.size()}});
  return http::JsonResponse(200, ResultBody(*result));
}

http::Response HandleCodexCancel(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kCodexScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  const std::string& run_id = request.path_params.at("run_id");
  absl::Status cancelled =
      ctx.deps.codex == nullptr
          ? ApiError(absl::StatusCode::kNotFound, "CODEX_RUN_NOT_FOUND",
                     "no managed Codex run with this id is going for the caller", 404)
          : ctx.deps.codex->Cancel(caller->owner, run_id);
  if (!cancelled.ok()) return Problem(cancelled, note);
  // The run id is the caller's own; it goes back to it, never to the log.
  return http::JsonResponse(
      202, nlohmann::json{{"run_id", run_id}, {"status", "cancel_requested"}}.dump());
}

}  // namespace aevatar::chrono
