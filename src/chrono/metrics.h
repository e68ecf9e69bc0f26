#ifndef AEVATAR_CHRONO_METRICS_H_
#define AEVATAR_CHRONO_METRICS_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "metrics/http_metrics.h"
#include "metrics/registry.h"
#include "sandbox/warm_python.h"

namespace aevatar::chrono {

// chrono-sandbox's series, rendered as Prometheus text at GET /metrics
// (docs/operations.md lists them):
//   chrono_http_requests_total{route,status},
//   chrono_http_request_duration_seconds{route} (histogram),
//   chrono_runs_total{verdict}, chrono_run_duration_seconds (histogram),
//   chrono_queue_depth, chrono_running,
//   chrono_codex_runs_total{status}, chrono_codex_running,
//   chrono_warm_python_ready, chrono_warm_python_served_total,
//   chrono_warm_python_failures_total.
// Labels are bounded (route patterns, verdict names), never ids. Thread-safe.
class Metrics {
 public:
  Metrics();
  // One answered request: its route pattern, status and handler time.
  void CountRequest(const std::string& route, int status, double seconds = 0);
  void CountRun(const std::string& verdict, double seconds);
  // A managed Codex run that reached Codex ("succeeded", "failed", "timed_out").
  void CountCodexRun(const std::string& status);
  // The exposition, with the gauges read now by the caller. The engine keeps
  // the warm sandboxes' totals; each render adds what is new since the last.
  std::string Render(int64_t queue_depth, int64_t running, int64_t codex_running = 0,
                     const sandbox::WarmPythonStats& warm = {});

 private:
  metrics::Registry registry_;
  metrics::HttpMetrics http_;
  metrics::Counter* runs_;
  metrics::Counter* codex_runs_;
  metrics::Gauge* codex_running_;
  metrics::Gauge* queue_depth_;
  metrics::Gauge* running_;
  metrics::Histogram* run_seconds_;
  metrics::Gauge* warm_ready_;
  metrics::Counter* warm_served_;
  metrics::Counter* warm_failures_;
  absl::Mutex warm_mu_;
  sandbox::WarmPythonStats warm_rendered_ ABSL_GUARDED_BY(warm_mu_);
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_METRICS_H_
