#ifndef AEVATAR_AEVATAR_API_AEVATAR_METRICS_H_
#define AEVATAR_AEVATAR_API_AEVATAR_METRICS_H_

#include <cstdint>
#include <string>

#include "metrics/http_metrics.h"
#include "metrics/registry.h"

namespace aevatar::orchestrator {

// aevatar's series, rendered at GET /metrics (docs/operations.md lists them):
//   aevatar_http_requests_total{route,status},
//   aevatar_http_request_duration_seconds{route},
//   aevatar_tool_calls_total{tool,outcome}     interactive tool calls over HTTP,
//   aevatar_workflow_runs_total{status}        runs this replica finished,
//   aevatar_workflow_run_duration_seconds      creation to finish,
//   aevatar_codex_runs_total{outcome}          managed codex_exec, interactive
//                                              and workflow steps alike,
//   aevatar_approvals_pending                  pending, unexpired approvals.
// Outcomes are "ok", a runner status or a typed code in lower case: never
// ids, user names or text. Thread-safe.
class AevatarMetrics {
 public:
  AevatarMetrics();

  // One answered request of `route` (pattern); counts the tool calls by
  // their routes. `code` is the typed error code ("" on success).
  void CountRequest(const std::string& route, int status, const std::string& code, double seconds);
  // A workflow run finished in `status` (succeeded | failed | stopped).
  void CountRunFinished(const std::string& status, double seconds);
  // A managed codex_exec run ended with `outcome` (status or typed code).
  void CountCodexRun(const std::string& outcome);
  // The exposition, with the pending approvals counted now by the caller
  // (< 0: unknown, the gauge is left out).
  std::string Render(int64_t approvals_pending) const;

 private:
  metrics::Registry registry_;
  metrics::HttpMetrics http_;
  metrics::Counter* tool_calls_;
  metrics::Counter* runs_;
  metrics::Histogram* run_seconds_;
  metrics::Counter* codex_runs_;
  metrics::Gauge* approvals_pending_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_AEVATAR_METRICS_H_
