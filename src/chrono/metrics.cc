#include "chrono/metrics.h"

namespace aevatar::chrono {

// Names and help texts predate the shared registry; keep them stable, since
// dashboards and alerts key on them.
Metrics::Metrics()
    : http_(registry_, "chrono"),
      runs_(registry_.AddCounter("chrono_runs_total", "Finished sandbox runs by verdict.",
                                 {"verdict"})),
      codex_runs_(registry_.AddCounter("chrono_codex_runs_total",
                                       "Managed Codex runs by terminal status.", {"status"})),
      codex_running_(
          registry_.AddGauge("chrono_codex_running", "Managed Codex runs executing now.")),
      queue_depth_(registry_.AddGauge("chrono_queue_depth", "Accepted runs waiting for a worker.")),
      running_(registry_.AddGauge("chrono_running", "Runs executing now.")),
      run_seconds_(
          registry_.AddHistogram("chrono_run_duration_seconds", "Wall time of sandbox runs.")) {}

void Metrics::CountRequest(const std::string& route, int status, double seconds) {
  http_.Observe(route, status, seconds);
}

void Metrics::CountRun(const std::string& verdict, double seconds) {
  runs_->Add({verdict});
  run_seconds_->Observe({}, seconds);
}

void Metrics::CountCodexRun(const std::string& status) { codex_runs_->Add({status}); }

std::string Metrics::Render(int64_t queue_depth, int64_t running, int64_t codex_running) const {
  queue_depth_->Set({}, static_cast<double>(queue_depth));
  running_->Set({}, static_cast<double>(running));
  codex_running_->Set({}, static_cast<double>(codex_running));
  return registry_.Render();
}

}  // namespace aevatar::chrono
