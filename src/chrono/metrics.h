#ifndef AEVATAR_CHRONO_METRICS_H_
#define AEVATAR_CHRONO_METRICS_H_

#include <cstdint>
#include <string>

#include "metrics/http_metrics.h"
#include "metrics/registry.h"

namespace aevatar::chrono {

// chrono-sandbox's series, rendered as Prometheus text at GET /metrics
// (docs/operations.md lists them):
//   chrono_http_requests_total{route,status},
//   chrono_http_request_duration_seconds{route} (histogram),
//   chrono_runs_total{verdict}, chrono_run_duration_seconds (histogram),
//   chrono_queue_depth, chrono_running,
//   chrono_codex_runs_total{status}, chrono_codex_running.
// Labels are bounded (route patterns, verdict names), never ids. Thread-safe.
class Metrics {
 public:
  Metrics();
  // One answered request: its route pattern, status and handler time.
  void CountRequest(const std::string& route, int status, double seconds = 0);
  void CountRun(const std::string& verdict, double seconds);
  // A managed Codex run that reached Codex ("succeeded", "failed", "timed_out").
  void CountCodexRun(const std::string& status);
  // The exposition, with the gauges read now by the caller.
  std::string Render(int64_t queue_depth, int64_t running, int64_t codex_running = 0) const;

 private:
  metrics::Registry registry_;
  metrics::HttpMetrics http_;
  metrics::Counter* runs_;
  metrics::Counter* codex_runs_;
  metrics::Gauge* codex_running_;
  metrics::Gauge* queue_depth_;
  metrics::Gauge* running_;
  metrics::Histogram* run_seconds_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_METRICS_H_
