#ifndef AEVATAR_AEVATAR_API_SERVICE_H_
#define AEVATAR_AEVATAR_API_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/admission/tool_catalog.h"
#include "http/service_tls.h"

namespace aevatar::http {
class Router;
}  // namespace aevatar::http

namespace aevatar::orchestrator {

// Configuration of `aevatar serve`. Validated once at start-up.
struct ServiceConfig {
  std::string listen = "127.0.0.1:8082";  // HOST:PORT; port 0 picks a free one
  std::string state_dir;                  // required
  // Where the state lives (store_backend.h): "" or "sqlite" for files in
  // state_dir (one process), or a PostgreSQL URL (postgresql://…, or
  // postgres:CONNINFO) shared by every replica naming it.
  std::string store;
  // This replica's id among those sharing the store, unique to it (default:
  // "local" on SQLite, random per start on PostgreSQL), and the lease of a
  // run's turns: how long a dead replica's runs wait before another takes
  // them over (workflow_runtime.h).
  std::string replica_id;
  int64_t run_lease_ms = 15'000;
  // Workflow turns delivered at once (workflow_runtime.h): a turn mostly
  // waits on NyxID and chrono-sandbox, so more workers than cores keep a
  // large batch of runs moving.
  int workflow_workers = 16;
  // The vault key's file outside the state directory (vault_key_source.h);
  // empty: $AEVATAR_VAULT_KEY, else <state_dir>/vault.key.
  std::string vault_key_file;
  std::string nyxid_url;  // required: NyxID's public base URL
  // This service's registered-client secret at NyxID (for Agent Key
  // introspection); read from `introspection_secret_file` when set.
  std::string introspection_secret;
  std::string introspection_secret_file;
  // The catalog id of the chrono-sandbox service in NyxID.
  std::string chrono_catalog_id = "chrono-sandbox";
  // The audience of NyxID delegation tokens minted for aevatar.
  std::string audience = "aevatar";
  int http_threads = 2;
  // Also serve this process's own calls to `listen` without TCP
  // (http::ServerOptions::serve_in_process): `aevatar up` runs the services
  // in one process.
  bool serve_in_process = false;
  http::ServiceTls tls;  // the listener's, and the calls to NyxID
  // The stop-cancellation window of workflow runs (the spec's two minutes;
  // tests shorten it).
  int64_t stop_window_ms = 120'000;
  // Managed codex_exec (RolloutRestrictedPlatform, RolloutBoundary
  // InternalOnly): "off" (default: the target is not exposed,
  // managed_target_disabled), "allowlist" (only the NyxID user ids in
  // `managed_codex_allowlist`, comma-separated) or "all".
  std::string managed_codex = "off";
  std::string managed_codex_allowlist;
  // The catalog id of the chrono-llm-public (model route) service in NyxID.
  std::string llm_catalog_id = "chrono-llm-public";
  // The managed request deadline (spec: 300 s) and the NyxID client's bound
  // on that exchange (330 s); request < client is required.
  int64_t managed_request_deadline_ms = 300'000;
  int64_t managed_client_deadline_ms = 330'000;
  // The runtime environments code_execute advertises: the executor's
  // (chrono-sandbox --runtime), names and languages only.
  std::vector<RuntimeOffer> runtimes = {};
  // A folder of skill directories (skill.yaml + assets/*.yaml) published to
  // the skill registry at every start (idempotent; `aevatar up` names the
  // bundled skills/ here). Empty: none.
  std::string bundled_skills_dir;
  // The bearer token that reads /metrics ("" = loopback peers only).
  std::string metrics_token = "";
};

// A running orchestrator: HTTP API over NyxID and the executor.
class AevatarService {
 public:
  static absl::StatusOr<std::unique_ptr<AevatarService>> Start(const ServiceConfig& config);
  virtual ~AevatarService() = default;
  virtual uint16_t port() const = 0;
  // The router the server answers with: every route this configuration
  // serves, for tests that call each of them in process (the adversarial
  // route matrix). Valid until the service is destroyed.
  virtual const http::Router& router() const = 0;
  virtual void Stop() = 0;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_SERVICE_H_
