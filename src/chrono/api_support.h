#ifndef AEVATAR_CHRONO_API_SUPPORT_H_
#define AEVATAR_CHRONO_API_SUPPORT_H_

// Shared plumbing of the executor's HTTP handlers (private to src/chrono).

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "chrono/http_api.h"
#include "chrono/operation.h"
#include "http/message.h"
#include "nlohmann/json.hpp"

namespace aevatar::chrono {

struct ApiContext {
  HttpApiOptions options;
  HttpApiDeps deps;
};

// What the per-request log line says besides route and status.
struct RequestNote {
  std::string operation_id;
  std::string code;
  std::string diagnostic_id;
};

// A problem+json response for `status`, with a fresh diagnostic id noted for
// the log line.
http::Response Problem(const absl::Status& status, RequestNote& note);

http::Response Json(int status, const nlohmann::json& body);

// The runtime environments a request may choose (HttpApiDeps::runtimes, or
// none).
const std::vector<sandbox::RuntimeEnv>& DeclaredRuntimes(const ApiContext& ctx);

// An Idempotency-Key header is 1..255 characters.
inline constexpr size_t kMaxIdempotencyKeyLength = 255;

// The scope every executor route requires of the delegation token.
inline constexpr char kExecuteScope[] = "sandbox:execute";

// The scope POST /codex/execute requires instead (the run calls the
// caller's LLM route through NyxID's proxy).
inline constexpr char kCodexScope[] = "proxy:*";

// POST /codex/execute, in codex/codex_api.cc.
http::Response HandleCodexExecute(const ApiContext& ctx, http::Request& request, RequestNote& note);
// POST /codex/runs/{run_id}/cancel, in codex/codex_api.cc: 202
// {"run_id", "status": "cancel_requested"} when the caller has that run
// going (it then answers "cancelled"); 404 CODEX_RUN_NOT_FOUND otherwise.
http::Response HandleCodexCancel(const ApiContext& ctx, http::Request& request, RequestNote& note);

// An operation's status document (no payloads): id, status, times, done.
nlohmann::json StatusDocument(const Operation& op);

// Handlers of the durable routes, in executions_api.cc.
http::Response HandleSubmit(const ApiContext& ctx, http::Request& request, RequestNote& note);
http::Response HandleStatus(const ApiContext& ctx, http::Request& request, RequestNote& note);
http::Response HandleResult(const ApiContext& ctx, http::Request& request, RequestNote& note);
http::Response HandleCancel(const ApiContext& ctx, http::Request& request, RequestNote& note);
// GET /executions: the caller's operations, in executions_listing.cc.
http::Response HandleListExecutions(const ApiContext& ctx, http::Request& request,
                                    RequestNote& note);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_API_SUPPORT_H_
