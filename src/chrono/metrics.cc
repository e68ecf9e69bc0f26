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
          registry_.AddHistogram("chrono_run_duration_seconds", "Wall time of sandbox runs.")),
      warm_ready_(registry_.AddGauge("chrono_warm_python_ready",
                                     "Warm Python sandboxes waiting for a program.")),
      warm_served_(registry_.AddCounter("chrono_warm_python_served_total",
                                        "Python runs that took a warm sandbox.")),
      warm_failures_(registry_.AddCounter("chrono_warm_python_failures_total",
                                          "Warm Python sandboxes that failed to start.")) {
  // Exposed from the start, so that a rate over them needs no first event.
  warm_served_->Add({}, 0);
  warm_failures_->Add({}, 0);
}

void Metrics::CountRequest(const std::string& route, int status, double seconds) {
  http_.Observe(route, status, seconds);
}

void Metrics::CountRun(const std::string& verdict, double seconds) {
  runs_->Add({verdict});
  run_seconds_->Observe({}, seconds);
}

void Metrics::CountCodexRun(const std::string& status) { codex_runs_->Add({status}); }

std::string Metrics::Render(int64_t queue_depth, int64_t running, int64_t codex_running,
                            const sandbox::WarmPythonStats& warm) {
  {
    absl::MutexLock lock(&warm_mu_);
    warm_ready_->Set({}, static_cast<double>(warm.ready));
    if (warm.served > warm_rendered_.served) {
      warm_served_->Add({}, static_cast<double>(warm.served - warm_rendered_.served));
      warm_rendered_.served = warm.served;
    }
    if (warm.failures > warm_rendered_.failures) {
      warm_failures_->Add({}, static_cast<double>(warm.failures - warm_rendered_.failures));
      warm_rendered_.failures = warm.failures;
    }
  }
  queue_depth_->Set({}, static_cast<double>(queue_depth));
  running_->Set({}, static_cast<double>(running));
  codex_running_->Set({}, static_cast<double>(codex_running));
  return registry_.Render();
}

}  // namespace aevatar::chrono
