#include "chrono/metrics.h"

#include <sstream>

namespace aevatar::chrono {

void Metrics::CountRequest(const std::string& route, int status) {
  absl::MutexLock lock(&mu_);
  ++requests_[{route, status}];
}

void Metrics::CountRun(const std::string& verdict, double seconds) {
  absl::MutexLock lock(&mu_);
  ++runs_[verdict];
  ++run_count_;
  run_seconds_sum_ += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++bucket_counts_[i];
  }
}

void Metrics::CountCodexRun(const std::string& status) {
  absl::MutexLock lock(&mu_);
  ++codex_runs_[status];
}

std::string Metrics::Render(int64_t queue_depth, int64_t running, int64_t codex_running) const {
  absl::MutexLock lock(&mu_);
  std::ostringstream out;
  out << "# HELP chrono_http_requests_total HTTP requests by route pattern and status.\n"
      << "# TYPE chrono_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out << "chrono_http_requests_total{route=\"" << key.first << "\",status=\"" << key.second
        << "\"} " << count << "\n";
  }
  out << "# HELP chrono_runs_total Finished sandbox runs by verdict.\n"
      << "# TYPE chrono_runs_total counter\n";
  for (const auto& [verdict, count] : runs_) {
    out << "chrono_runs_total{verdict=\"" << verdict << "\"} " << count << "\n";
  }
  out << "# HELP chrono_codex_runs_total Managed Codex runs by terminal status.\n"
      << "# TYPE chrono_codex_runs_total counter\n";
  for (const auto& [status, count] : codex_runs_) {
    out << "chrono_codex_runs_total{status=\"" << status << "\"} " << count << "\n";
  }
  out << "# HELP chrono_codex_running Managed Codex runs executing now.\n"
      << "# TYPE chrono_codex_running gauge\nchrono_codex_running " << codex_running << "\n";
  out << "# HELP chrono_queue_depth Accepted runs waiting for a worker.\n"
      << "# TYPE chrono_queue_depth gauge\nchrono_queue_depth " << queue_depth << "\n"
      << "# HELP chrono_running Runs executing now.\n"
      << "# TYPE chrono_running gauge\nchrono_running " << running << "\n"
      << "# HELP chrono_run_duration_seconds Wall time of sandbox runs.\n"
      << "# TYPE chrono_run_duration_seconds histogram\n";
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    out << "chrono_run_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} " << bucket_counts_[i]
        << "\n";
  }
  out << "chrono_run_duration_seconds_bucket{le=\"+Inf\"} " << run_count_ << "\n"
      << "chrono_run_duration_seconds_sum " << run_seconds_sum_ << "\n"
      << "chrono_run_duration_seconds_count " << run_count_ << "\n";
  return out.str();
}

}  // namespace aevatar::chrono
