#ifndef AEVATAR_CHRONO_METRICS_H_
#define AEVATAR_CHRONO_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::chrono {

// Service counters, rendered as Prometheus text at GET /metrics:
//   chrono_http_requests_total{route,status}, chrono_runs_total{verdict},
//   chrono_queue_depth, chrono_run_duration_seconds (histogram),
//   chrono_codex_runs_total{status}, chrono_codex_running.
// Labels are bounded (route patterns, verdict names), never ids. Thread-safe.
class Metrics {
 public:
  void CountRequest(const std::string& route, int status);
  void CountRun(const std::string& verdict, double seconds);
  // A managed Codex run that reached Codex ("succeeded", "failed", "timed_out").
  void CountCodexRun(const std::string& status);
  std::string Render(int64_t queue_depth, int64_t running, int64_t codex_running = 0) const;

 private:
  static constexpr std::array<double, 10> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1,
                                                      0.25,  0.5,  1,     5,    30};
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> runs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> codex_runs_ ABSL_GUARDED_BY(mu_);
  std::array<uint64_t, kBuckets.size()> bucket_counts_ ABSL_GUARDED_BY(mu_) = {};
  uint64_t run_count_ ABSL_GUARDED_BY(mu_) = 0;
  double run_seconds_sum_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_METRICS_H_
