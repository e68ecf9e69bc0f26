#include "aevatar/api/service.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "aevatar/admission/admission_cache.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/admission/revalidated_facts.h"
#include "aevatar/api/aevatar_metrics.h"
#include "aevatar/api/http_api.h"
#include "aevatar/api/store_backend.h"
#include "aevatar/api/trigger_runs.h"
#include "aevatar/api/vault_key_source.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/clients/executions_transport.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/private_ssh_run.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/skills/skill_dir.h"
#include "aevatar/triggers/trigger_scheduler.h"
#include "aevatar/triggers/trigger_store.h"
#include "aevatar/vault/rotation_watcher.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/jws.h"
#include "base/log.h"
#include "base/login_throttle.h"
#include "http/server.h"
#include "os/atomic_file.h"

namespace aevatar::orchestrator {
namespace {

class Service : public AevatarService {
 public:
  ~Service() override { Stop(); }
  uint16_t port() const override { return server_->port(); }
  const http::Router& router() const override { return *router_; }
  void Stop() override {
    if (server_) server_->Stop();
    if (scheduler_) scheduler_->Stop();
    if (runtime_) runtime_->Stop();
    if (rotation_) rotation_->Stop();
  }

  absl::Status Init(const ServiceConfig& config) {
    auto listen = http::ParseListenAddress(config.listen);
    if (!listen.ok()) return listen.status();
    if (config.state_dir.empty()) return absl::InvalidArgumentError("--state-dir is required");
    if (config.nyxid_url.empty()) return absl::InvalidArgumentError("--nyxid-url is required");
    if (absl::Status st = http::CheckServiceTls("aevatar", listen->first, config.tls); !st.ok()) {
      return st;
    }
    if (absl::Status st = os::MakeDirectories(config.state_dir, 0700); !st.ok()) return st;
    if (config.run_lease_ms < 300) return absl::InvalidArgumentError("--run-lease-ms < 300");
    if (config.workflow_workers < 1 || config.workflow_workers > 256) {
      return absl::InvalidArgumentError("--workflow-workers is outside 1..256");
    }
    // Before anything listens: an unreachable database fails the start.
    auto backend = StoreBackend::Open(config.store, config.state_dir);
    if (!backend.ok()) return backend.status();
    backend_ = std::make_unique<StoreBackend>(*std::move(backend));
    base::Log(base::LogLevel::kInfo, "aevatar.store", "", {{"backend", backend_->name()}});
    std::string secret = config.introspection_secret;
    if (!config.introspection_secret_file.empty()) {
      std::ifstream in(config.introspection_secret_file);
      if (!in) return absl::InvalidArgumentError("cannot read --introspection-secret-file");
      std::getline(in, secret);
    }
    nyxid_ = std::make_unique<NyxidClient>(config.nyxid_url, secret, std::chrono::seconds(15),
                                           config.tls.peers);
    jwks_ = std::make_unique<base::JwksCache>([this] { return nyxid_->FetchJwks(); });
    auth_ = std::make_unique<IngressAuth>(nyxid_.get(), jwks_->AsLookup(), config.audience);
    // The vault key seals the managed credentials, the workflow runtime's
    // material and the approvals' calls; one keyring, shared with the key
    // rotation, serves them all.
    auto vault = LoadVaultKey(config.vault_key_file, config.state_dir);
    if (!vault.ok()) return vault.status();
    base::Log(base::LogLevel::kInfo, "aevatar.vault_key", "",
              {{"source", vault->source}, {"rotating", !vault->retiring.empty()}});
    keyring_ = std::make_shared<VaultKeyring>(vault->key, vault->retiring);
    if (absl::Status st = StartManagedCodex(config); !st.ok()) return st;
    // Approvals before workflows: a private_ssh step waits on them.
    auto approvals = backend_->OpenApprovals(keyring_);
    if (!approvals.ok()) return approvals.status();
    approvals_ = std::move(*approvals);
    if (absl::Status st = StartWorkflows(config); !st.ok()) return st;
    if (absl::Status st = StartSkills(config); !st.ok()) return st;
    // Once the stores are open: a rotation under way resumes, a staged one
    // starts. The resealing sweep knows the SQLite files only: on a shared
    // database it would finish without resealing a row, so it does not run
    // (both keys of a rotation under way keep opening what is stored).
    if (!backend_->shared()) {
      rotation_ = std::make_unique<RotationWatcher>(
          RotationWatcher::Options{config.state_dir, vault->key_file, vault->key, vault->retiring},
          keyring_.get());
      rotation_->Start();
    } else {
      base::Log(base::LogLevel::kWarn, "aevatar.vault_rotation.unsupported", "",
                {{"backend", backend_->name()}});
    }
    HttpApiDeps deps{nyxid_.get(),     auth_.get(),    config.chrono_catalog_id,
                     workflows_.get(), runtime_.get(), audit_.get(),
                     codex_.get()};
    deps.approvals = approvals_.get();
    deps.skills = skills_.get();
    deps.triggers = triggers_.get();
    deps.agent_key_vault = vault_.get();
    deps.runtimes = config.runtimes;
    deps.metrics = &metrics_;
    deps.metrics_token = config.metrics_token;
    deps.admissions = std::make_shared<AdmissionCache>();
    ui_login_throttle_ =
        std::make_unique<base::LoginThrottle>(UiLoginThrottleOptions(), base::NowUnixMs);
    deps.ui_login_throttle = ui_login_throttle_.get();
    router_ = BuildHttpApi(deps);
    // Cron triggers fire through the same path as webhooks (FireTrigger).
    scheduler_ = std::make_unique<TriggerScheduler>(
        triggers_.get(),
        [deps](const TriggerRecord& trigger, int64_t slot_ms) {
          auto fired = FireTrigger(
              deps, trigger, nlohmann::json::object(),
              {{"kind", "cron"}, {"trigger_id", trigger.trigger_id}, {"slot_ms", slot_ms}});
          // Never a silent skip: a slot that started nothing and recorded
          // no failed run is at least a log line.
          if (!fired.ok()) {
            base::Log(base::LogLevel::kError, "trigger.fire_failed", trigger.trigger_id,
                      {{"trigger_id", trigger.trigger_id},
                       {"slot_ms", slot_ms},
                       {"code", base::ApiCode(fired.status())}});
          }
        },
        base::NowUnixMs);
    scheduler_->Start();
    http::ServerOptions options;
    options.host = listen->first;
    options.port = listen->second;
    options.io_threads = config.http_threads;
    options.tls = config.tls.listen;
    options.serve_in_process = config.serve_in_process;
    auto server = http::Server::Start(
        options, [this](http::Request& request) { return router_->Handle(request); });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    base::Log(base::LogLevel::kInfo, "aevatar.started", "", {{"port", server_->port()}});
    return absl::OkStatus();
  }

 private:
  // Managed codex_exec: the policy from the operator flags and the sealed
  // credential vault (codex.db, sealed with the vault keyring).
  absl::Status StartManagedCodex(const ServiceConfig& config) {
    auto policy = ParseManagedCodexPolicy(config.managed_codex, config.managed_codex_allowlist);
    if (!policy.ok()) return policy.status();
    if (config.managed_request_deadline_ms < 1 ||
        config.managed_client_deadline_ms <= config.managed_request_deadline_ms) {
      return absl::InvalidArgumentError(
          "the managed request deadline must be positive and below the NyxID client deadline");
    }
    // The vault of Agent Keys serves unattended workflow runs too, so it is
    // open even when managed Codex is off.
    auto vault = backend_->OpenCredentials(keyring_);
    if (!vault.ok()) return vault.status();
    vault_ = std::move(*vault);
    if (policy->mode == EligibilityMode::kOff) return absl::OkStatus();
    ManagedCodexConfig codex;
    codex.policy = *std::move(policy);
    codex.chrono_catalog_id = config.chrono_catalog_id;
    codex.llm_catalog_id = config.llm_catalog_id;
    codex.deadlines.request = std::chrono::milliseconds(config.managed_request_deadline_ms);
    codex.deadlines.client = std::chrono::milliseconds(config.managed_client_deadline_ms);
    codex.on_outcome = [this](const std::string& outcome) { metrics_.CountCodexRun(outcome); };
    codex_ = std::make_unique<ManagedCodex>(nyxid_.get(), vault_.get(), std::move(codex),
                                            base::NowUnixMs);
    return absl::OkStatus();
  }

  // The skill registry, and the bundled skills published into it.
  absl::Status StartSkills(const ServiceConfig& config) {
    auto skills = backend_->OpenSkills();
    if (!skills.ok()) return skills.status();
    skills_ = std::move(*skills);
    if (config.bundled_skills_dir.empty()) return absl::OkStatus();
    auto published = PublishBundledSkills(*skills_, config.bundled_skills_dir, base::NowUnixMs());
    if (!published.ok()) {
      base::Log(base::LogLevel::kWarn, "skills.bundled_missing", "",
                {{"detail", std::string(published.status().message())}});
    }
    return absl::OkStatus();
  }

  // The durable workflow runtime: its store and the audit log live in the
  // store backend; runs resume from there after a restart, or on another
  // replica sharing the database.
  absl::Status StartWorkflows(const ServiceConfig& config) {
    auto triggers = backend_->OpenTriggers(keyring_);
    if (!triggers.ok()) return triggers.status();
    triggers_ = std::move(*triggers);
    auto store = backend_->OpenWorkflows();
    if (!store.ok()) return store.status();
    workflows_ = std::move(*store);
    auto audit = backend_->OpenAudit();
    if (!audit.ok()) return audit.status();
    audit_ = std::move(*audit);
    WorkflowRuntime::Options options;
    options.stop_window_ms = config.stop_window_ms;
    // One process on SQLite files: a fixed id, so that a restart takes its
    // runs back at once. Replicas sharing a database get a random one.
    options.replica_id = !config.replica_id.empty() ? config.replica_id
                         : backend_->shared()       ? ""
                                                    : "local";
    options.lease_ms = config.run_lease_ms;
    options.workers = config.workflow_workers;
    options.vault = keyring_;
    options.on_run_finished = [this](const std::string& phase, double seconds) {
      metrics_.CountRunFinished(phase, seconds);
    };
    ManagedCredentialVault* agent_keys = vault_.get();
    options.agent_keys = [agent_keys](const std::string& owner) -> absl::StatusOr<std::string> {
      auto held = agent_keys->Load(owner);
      if (!held.ok()) return held.status();
      if (!held->has_value()) {
        return base::ApiError(absl::StatusCode::kFailedPrecondition,
                              WorkflowRuntime::kAgentKeyMissingCode,
                              "the run's owner has no Agent Key in the vault");
      }
      return (*held)->secret;
    };
    if (codex_ != nullptr) {
      const ManagedCodex* codex = codex_.get();
      options.codex = [codex](const std::string& user_id, const CodexExecArgs& args,
                              const std::string& key, const std::string& diagnostic_id,
                              std::chrono::milliseconds budget,
                              const std::vector<std::string>& caller_services) {
        return codex->Execute(user_id, args, key, diagnostic_id, budget, caller_services);
      };
      options.codex_cancel = [codex](const std::string& user_id, const std::string& key,
                                     const std::string& diagnostic_id,
                                     const std::vector<std::string>& caller_services) {
        return codex->CancelRun(user_id, key, diagnostic_id, caller_services);
      };
    }
    const NyxidClient* nyxid = nyxid_.get();
    options.approvals = approvals_.get();
    options.private_ssh = [nyxid](const std::string& credential, const CodexExecArgs& args,
                                  std::chrono::milliseconds budget) {
      return RunPrivateSsh(*nyxid, credential, args, budget);
    };
    runtime_ = std::make_unique<WorkflowRuntime>(
        options, workflows_.get(), audit_.get(),
        [nyxid](const AdmittedRoute& route, const std::string& credential) {
          return std::unique_ptr<ExecutionsTransport>(
              new ProxyExecutionsTransport(nyxid, credential, route.slug, route.user_service_id));
        },
        [facts = std::make_shared<RevalidatedFacts>(nyxid)](const std::string& credential) {
          return facts->Read(credential);
        },
        base::NowUnixMs);
    runtime_->Start();
    return absl::OkStatus();
  }

  // First: the runtime and the handlers report to it until they are gone.
  AevatarMetrics metrics_;
  std::unique_ptr<StoreBackend> backend_;
  std::shared_ptr<VaultKeyring> keyring_;
  std::unique_ptr<RotationWatcher> rotation_;
  std::unique_ptr<NyxidClient> nyxid_;
  std::unique_ptr<base::JwksCache> jwks_;
  std::unique_ptr<IngressAuth> auth_;
  std::unique_ptr<WorkflowStore> workflows_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<ManagedCredentialVault> vault_;
  std::unique_ptr<ManagedCodex> codex_;
  std::unique_ptr<WorkflowRuntime> runtime_;
  std::unique_ptr<TriggerStore> triggers_;
  std::unique_ptr<TriggerScheduler> scheduler_;
  std::unique_ptr<ApprovalStore> approvals_;
  std::unique_ptr<SkillStore> skills_;
  std::unique_ptr<base::LoginThrottle> ui_login_throttle_;
  std::unique_ptr<http::Router> router_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AevatarService>> AevatarService::Start(const ServiceConfig& config) {
  auto service = std::make_unique<Service>();
  if (absl::Status st = service->Init(config); !st.ok()) return st;
  return std::unique_ptr<AevatarService>(std::move(service));
}

}  // namespace aevatar::orchestrator
