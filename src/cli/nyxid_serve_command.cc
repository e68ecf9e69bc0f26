// `nyxid serve`: the broker's HTTP service, until SIGINT/SIGTERM.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>

#include "CLI/CLI.hpp"
#include "base/log.h"
#include "cli/config_file.h"
#include "cli/nyxid_commands.h"
#include "cli/operator_flags.h"
#include "cli/tls_flags.h"
#include "cli/wait_for_signal.h"
#include "nyxid/api/service.h"

namespace aevatar::cli {
namespace {

int RunServe(const nyxid::ServiceConfig& config) {
  BlockStopSignals();
  auto service = nyxid::NyxidService::Start(config);
  if (!service.ok()) {
    std::cerr << "nyxid serve: " << service.status().message() << "\n";
    return 1;
  }
  // The first stdout line is the contract with supervisors and tests.
  std::cout << "nyxid listening on port " << (*service)->port() << std::endl;
  int sig = WaitForStopSignal();
  base::Log(base::LogLevel::kInfo, "nyxid.stopping", "", {{"signal", sig}});
  (*service)->Stop();
  return 0;
}

}  // namespace

CLI::App* AddNyxidServeCommand(CLI::App& app, int& exit_code) {
  auto config = std::make_shared<nyxid::ServiceConfig>();
  CLI::App* serve = app.add_subcommand("serve", "run the broker's HTTP service");
  serve->add_option("--listen", config->listen, "HOST:PORT (port 0 picks a free one)")
      ->capture_default_str();
  serve
      ->add_option("--state-dir", config->state_dir,
                   "SQLite store and signing keys (with --store: at-rest.key only)")
      ->required();
  serve->add_option("--store", config->store,
                    "postgresql://… : keep the state in PostgreSQL, shared by replicas "
                    "(default: SQLite in the state dir)");
  serve->add_option("--bootstrap", config->bootstrap_file, "YAML seed applied idempotently");
  serve->add_option("--public-url", config->public_url, "URL callers use; the tokens' issuer");
  AddTlsFlags(serve, config->tls, "https upstreams (catalog services, chrono-sandbox)",
              "--ca-file,--upstream-ca-file");
  // The proxy deadline: seconds for operators, milliseconds for tests that
  // scale the deadline chain down (180 < 300 < 315 < 330 < 360 s).
  auto timeout_secs = std::make_shared<int64_t>(nyxid::kDefaultProxyTimeout.count() / 1000);
  auto timeout_ms = std::make_shared<int64_t>(0);
  CLI::Option* secs =
      serve
          ->add_option("--proxy-timeout-secs", *timeout_secs,
                       "deadline of one proxied exchange, 1..3600 (the NyxID ingress layer of "
                       "the managed-Codex deadline chain)")
          ->capture_default_str();
  CLI::Option* ms = serve
                        ->add_option("--proxy-timeout-ms", *timeout_ms,
                                     "the same deadline in milliseconds (scaled-deadline tests)")
                        ->excludes(secs);
  serve->callback([config, timeout_secs, timeout_ms, ms, &exit_code] {
    // Out-of-range values are refused by NyxidService::Start.
    config->proxy_timeout = ms->count() > 0 ? std::chrono::milliseconds(*timeout_ms)
                                            : std::chrono::seconds(*timeout_secs);
    exit_code = RunServe(*config);
  });
  AddOperatorFlags(serve, &config->metrics_token);
  AddConfigFlag(serve, "nyxid");
  return serve;
}

}  // namespace aevatar::cli
