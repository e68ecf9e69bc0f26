#ifndef AEVATAR_CHRONO_SERVICE_H_
#define AEVATAR_CHRONO_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "http/service_tls.h"
#include "sandbox/runtime_env.h"

namespace aevatar::chrono {

// Configuration of `chrono-sandbox serve`. Validated once at start-up.
struct ServiceConfig {
  std::string listen = "127.0.0.1:8081";  // HOST:PORT; port 0 picks a free one
  std::string state_dir;                  // required: store, at-rest key, runner id
  // "sqlite:PATH"; "" or "sqlite" (the default: sqlite:<state_dir>/operations.db);
  // "postgres:URL" or a libpq URI "postgresql://…" (several replicas may share it).
  std::string store;
  // Names this replica in claimed_by and the log (1-64 of [A-Za-z0-9._-]).
  // Replicas sharing a store need distinct ids, each stable across its
  // restarts (a restart settles the runs its previous process left). ""
  // (default): the id kept in <state_dir>/runner.id, created once.
  std::string replica_id;
  // The 32-byte key that seals Agent Keys stored with queued operations, in
  // a file (0600). Replicas sharing a store need the same key, or one cannot
  // unseal what another accepted. "" (default): <state_dir>/at-rest.key,
  // created on first use.
  std::string sealing_key_file;
  // NyxID's published keys; exactly one of the two is required (fail closed).
  std::string jwks_file;
  std::string jwks_url;
  std::string audience = "chrono-sandbox";  // required "aud" of delegation tokens
  int workers = 0;                          // 0: one per core
  int queue_depth = 64;                     // synchronous runs waiting before 429
  int durable_queue_depth = 10000;          // durable operations queued before 429
  double retention_hours = 24;              // results readable this long (fractions allowed)
  bool async_enabled = true;                // false: POST /executions is 503
  // NyxID's base URL: NYXID_BASE_URL for Agent Key callers' programs, and
  // where the managed Codex runner's relay forwards model calls.
  std::string nyxid_base_url;
  int http_threads = 2;
  // Also serve this process's own calls to `listen` without TCP
  // (http::ServerOptions::serve_in_process): `aevatar up` runs the services
  // in one process.
  bool serve_in_process = false;
  http::ServiceTls tls;  // the listener's, and the calls to NyxID (JWKS, model relay)
  // The managed Codex runner (POST /codex/execute); available only with a
  // model, the Codex CLI at codex_path, the backend and nyxid_base_url.
  std::string codex_path;                // "" = the pinned install (kDefaultCodexPath)
  std::string codex_backend = "gvisor";  // gvisor | native
  std::string codex_model;               // the model name Codex asks the route for
  int codex_max_concurrent = 8;          // runs at once; past it 429 CODEX_RUNNER_BUSY
  // Runtime environments a request may choose by name (`runtime`), each a
  // host root mounted read-only into the runs that choose it; checked at
  // start-up (sandbox::CheckRuntimes). Readiness lists names and languages.
  std::vector<sandbox::RuntimeEnv> runtimes;
  // MiB of compiled TypeScript kept in memory (sandbox::EngineOptions::
  // typescript_cache_bytes); 0: every TypeScript run compiles in its own
  // sandbox (docs/security.md, the shared cache's trade-off).
  int typescript_cache_mib = 32;
  // Python sandboxes kept started for requests with the default limits
  // (sandbox::EngineOptions::warm_python); 0: none.
  int warm_python = 0;
  // The bearer token that reads /metrics ("" = loopback peers only).
  std::string metrics_token = "";
};

// A running executor: HTTP server, worker pool, store and expiry sweeper.
class ChronoService {
 public:
  // Validates `config`, opens the store (marking operations a previous
  // process left running as outcome_uncertain), self-checks the engine and
  // starts serving. Errors name the offending setting.
  static absl::StatusOr<std::unique_ptr<ChronoService>> Start(const ServiceConfig& config);
  virtual ~ChronoService() = default;
  virtual uint16_t port() const = 0;
  // Stops serving and joins everything; idempotent.
  virtual void Stop() = 0;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_SERVICE_H_
