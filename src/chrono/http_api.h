#ifndef AEVATAR_CHRONO_HTTP_API_H_
#define AEVATAR_CHRONO_HTTP_API_H_

#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "chrono/caller_auth.h"
#include "chrono/codex/codex_attach.h"
#include "chrono/codex/codex_runner.h"
#include "chrono/credential_sealer.h"
#include "chrono/executor.h"
#include "chrono/metrics.h"
#include "chrono/operation_store.h"
#include "http/openapi.h"
#include "http/router.h"
#include "sandbox/runtime_env.h"

namespace aevatar::chrono {

struct HttpApiOptions {
  bool async_enabled = true;
  std::string nyxid_base_url;  // given to Agent Key callers' programs as NYXID_BASE_URL
  int64_t retention_ms = 24 * 3600 * 1000LL;
  // The bearer token that reads /metrics; "" = loopback peers only.
  std::string metrics_token = "";
};

// Everything the handlers use; owned by the service, outliving the router.
struct HttpApiDeps {
  const CallerAuth* auth;
  Executor* executor;
  OperationStore* store;
  const CredentialSealer* sealer;
  Metrics* metrics;
  // Readiness of the engine (self-check at start-up).
  bool engine_ready;
  // Operation times, retention and cancel deadlines are judged by this clock.
  base::UnixMsClock now = base::NowUnixMs;
  // The managed Codex runner and its Idempotency-Key registry; null: every
  // POST /codex/execute is 503 CODEX_RUNNER_UNAVAILABLE.
  CodexRunner* codex = nullptr;
  CodexAttachRegistry* codex_attach = nullptr;
  // The declared runtime environments a request may choose (the engine's);
  // null: none.
  const std::vector<sandbox::RuntimeEnv>* runtimes = nullptr;
  // The engine's warm Python sandboxes, for /metrics; null: none.
  std::function<sandbox::WarmPythonStats()> warm_python_stats = nullptr;
};

// The executor's HTTP API (DESIGN §5):
//   POST /execute, POST /executions, GET /executions/{id},
//   GET /executions/{id}/result, POST /executions/{id}/cancel,
//   POST /codex/execute (the managed Codex runner, DESIGN §6),
//   GET /healthz, GET /readyz, GET /metrics, GET /openapi.json.
// Errors are problem+json with a typed code and a diagnostic id; each request
// logs one line with the route pattern, status and ids, never payloads.
std::unique_ptr<http::Router> BuildHttpApi(const HttpApiOptions& options, const HttpApiDeps& deps);

// The files of the executor's OpenAPI document (src/chrono/openapi/, compiled
// in): what GET /openapi.json serves and the coverage test checks.
std::vector<http::OpenApiFragment> OpenApiFragments();

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_HTTP_API_H_
