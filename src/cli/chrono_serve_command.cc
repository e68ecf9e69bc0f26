#include "cli/chrono_serve_command.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "base/log.h"
#include "cli/config_file.h"
#include "cli/operator_flags.h"
#include "cli/runtime_flag.h"
#include "cli/tls_flags.h"
#include "cli/wait_for_signal.h"

namespace aevatar::cli {

CLI::App* AddServeCommand(CLI::App& app, chrono::ServiceConfig& config) {
  CLI::App* serve = app.add_subcommand("serve", "Serve the executor's HTTP API");
  serve->add_option("--listen", config.listen, "HOST:PORT (default 127.0.0.1:8081)");
  serve->add_option("--state-dir", config.state_dir, "Directory for the store and keys")
      ->required();
  serve->add_option("--store", config.store,
                    "sqlite:PATH (default: in the state dir), postgres:URL or postgresql://…");
  serve->add_option("--replica-id", config.replica_id,
                    "This replica's name in claimed_by and the log; distinct per replica on one "
                    "store, stable across restarts (default: kept in STATE_DIR/runner.id)");
  serve->add_option("--sealing-key-file", config.sealing_key_file,
                    "The 32-byte key (a 0600 file) sealing stored Agent Keys; the same file on "
                    "every replica of one store (default: STATE_DIR/at-rest.key)");
  auto* file = serve->add_option("--jwks-file", config.jwks_file, "NyxID's JWKS document");
  auto* url = serve->add_option("--jwks-url", config.jwks_url, "URL of NyxID's JWKS");
  file->excludes(url);
  serve->add_option("--audience", config.audience, "Required token audience (chrono-sandbox)");
  serve->add_option("--workers", config.workers, "Concurrent runs (default: cores)")
      ->check(CLI::Range(1, 1024));
  serve->add_option("--queue-depth", config.queue_depth,
                    "Synchronous runs waiting for a worker before 429 (default 64)");
  serve->add_option("--durable-queue-depth", config.durable_queue_depth,
                    "Durable operations queued before 429 (default 10000)");
  serve->add_option("--retention-hours", config.retention_hours,
                    "How long results stay readable (default 24)");
  serve->add_flag(
      "--disable-async", [&config](int64_t) { config.async_enabled = false; },
      "Answer POST /executions with 503");
  serve->add_option("--nyxid-base-url,--nyxid-url", config.nyxid_base_url,
                    "NyxID's base URL: NYXID_BASE_URL for Agent Key callers' programs and the "
                    "target of the managed Codex runner's model relay");
  serve->add_option("--codex-path", config.codex_path,
                    "The Codex CLI binary (default: the pinned install under /opt/aevatar/codex)");
  serve->add_option("--codex-backend", config.codex_backend,
                    "Sandbox backend of managed Codex runs: gvisor (default) or native");
  serve->add_option("--codex-model", config.codex_model,
                    "Model name for managed Codex runs (required for POST /codex/execute)");
  serve->add_option("--codex-max-concurrent", config.codex_max_concurrent,
                    "Managed Codex runs at once before 429 (default 8)");
  AddRuntimeFlag(serve, [&config](sandbox::RuntimeEnv env) { config.runtimes.push_back(env); });
  serve
      ->add_option("--typescript-cache-mib", config.typescript_cache_mib,
                   "MiB of compiled TypeScript kept in memory (default 32; 0: compile in "
                   "every run)")
      ->check(CLI::Range(0, 4096));
  serve
      ->add_option("--warm-python", config.warm_python,
                   "Python sandboxes kept started ahead of requests with the default limits "
                   "(default 0: none; each holds an idle interpreter, ~10 MiB)")
      ->check(CLI::Range(0, 64));
  AddTlsFlags(serve, config.tls, "NyxID (JWKS, the model route)");
  AddOperatorFlags(serve, &config.metrics_token);
  AddConfigFlag(serve, "chrono-sandbox");
  return serve;
}

int RunServeCommand(const chrono::ServiceConfig& config) {
  BlockStopSignals();
  auto service = chrono::ChronoService::Start(config);
  if (!service.ok()) {
    std::cerr << "chrono-sandbox serve: " << service.status().message() << "\n";
    return 1;
  }
  std::cout << "chrono-sandbox listening on port " << (*service)->port() << std::endl;
  int sig = WaitForStopSignal();
  base::Log(base::LogLevel::kInfo, "chrono.stopping", "", {{"signal", sig}});
  (*service)->Stop();
  return 0;
}

}  // namespace aevatar::cli
