#include "chrono/service.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "base/log.h"
#include "chrono/caller_auth.h"
#include "chrono/codex/codex_attach.h"
#include "chrono/codex/codex_profile.h"
#include "chrono/codex/codex_runner.h"
#include "chrono/credential_sealer.h"
#include "chrono/execute_request.h"
#include "chrono/executor.h"
#include "chrono/http_api.h"
#include "chrono/metrics.h"
#include "chrono/postgres_operation_store.h"
#include "chrono/sqlite_operation_store.h"
#include "http/client.h"
#include "http/server.h"
#include "os/atomic_file.h"
#include "os/process.h"
#include "sandbox/engine.h"
#include "store/store_spec.h"

namespace aevatar::chrono {
namespace {

using base::LogLevel;

constexpr absl::Duration kExpirySweepInterval = absl::Seconds(60);
constexpr int64_t kTombstoneKeepMs = 7 * 24 * 3600 * 1000LL;

base::JwksCache::Fetcher MakeJwksFetcher(const ServiceConfig& config) {
  if (!config.jwks_file.empty()) {
    return [path = config.jwks_file]() -> absl::StatusOr<std::string> {
      std::ifstream in(path);
      if (!in) return absl::UnavailableError("cannot read the JWKS file");
      std::ostringstream text;
      text << in.rdbuf();
      return text.str();
    };
  }
  return [url = config.jwks_url, tls = config.tls.peers]() -> absl::StatusOr<std::string> {
    http::ClientRequest request;
    request.url = url;
    request.tls = tls;
    request.timeout = std::chrono::seconds(5);
    auto response = http::Fetch(request);
    if (!response.ok()) return response.status();
    if (response->status != 200) return absl::UnavailableError("the JWKS URL did not answer 200");
    return response->body;
  };
}

sandbox::EngineOptions EngineOptionsFor(const ServiceConfig& config) {
  sandbox::EngineOptions options;
  options.runtimes = config.runtimes;
  options.typescript_cache_bytes = static_cast<size_t>(std::max(config.typescript_cache_mib, 0))
                                   << 20;
  options.warm_python = static_cast<size_t>(std::max(config.warm_python, 0));
  // What a request that sets no limits runs with (ToRunSpec).
  options.warm_python_limits.wall_timeout_secs = kDefaultTimeoutSecs;
  return options;
}

// --store with its default spelled out: "sqlite:PATH", "postgres:URL" or a URI.
std::string StoreSpec(const ServiceConfig& config) {
  return store::NamesDefaultSqlite(config.store) ? "sqlite:" + config.state_dir + "/operations.db"
                                                 : config.store;
}

bool IsSqliteStore(const std::string& spec) { return spec.rfind("sqlite:", 0) == 0; }

absl::StatusOr<std::unique_ptr<OperationStore>> OpenStore(const ServiceConfig& config) {
  const std::string spec = StoreSpec(config);
  if (IsSqliteStore(spec)) return OpenSqliteOperationStore(spec.substr(7));
  if (auto conninfo = store::PostgresConninfo(spec)) return OpenPostgresOperationStore(*conninfo);
  return absl::InvalidArgumentError("--store must be sqlite:PATH, postgres:URL or postgresql://…");
}

// This replica's runner id: --replica-id, else the one kept in the state
// directory, so that a restart marks exactly the operations the previous
// process of this replica left running (replicas sharing a store have their
// own state directories, hence distinct ids).
absl::StatusOr<std::string> RunnerId(const ServiceConfig& config) {
  if (config.replica_id.empty()) {
    auto bytes = os::LoadOrCreateKeyFile(config.state_dir + "/runner.id", 16);
    if (!bytes.ok()) return bytes.status();
    return "runner_" + base::HexEncode(*bytes);
  }
  const bool valid =
      config.replica_id.size() <= 64 &&
      config.replica_id.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == std::string::npos;
  if (!valid) {
    return absl::InvalidArgumentError("--replica-id must be 1-64 of A-Z a-z 0-9 . _ -");
  }
  return config.replica_id;
}

absl::StatusOr<CredentialSealer> LoadSealer(const ServiceConfig& config) {
  if (config.sealing_key_file.empty()) return CredentialSealer::LoadOrCreate(config.state_dir);
  return CredentialSealer::LoadShared(config.sealing_key_file);
}

class Service : public ChronoService {
 public:
  ~Service() override { Stop(); }

  uint16_t port() const override { return server_->port(); }

  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;  // wakes the sweeper's Await
    }
    if (server_) server_->Stop();
    if (executor_) executor_->Stop();
    if (sweeper_.joinable()) sweeper_.join();
  }

  absl::Status Init(const ServiceConfig& config) {
    auto listen = http::ParseListenAddress(config.listen);
    if (!listen.ok()) return listen.status();
    if (config.state_dir.empty()) return absl::InvalidArgumentError("--state-dir is required");
    if (config.jwks_file.empty() == config.jwks_url.empty()) {
      return absl::InvalidArgumentError("exactly one of --jwks-file or --jwks-url is required");
    }
    if (absl::Status st = http::CheckServiceTls("chrono-sandbox", listen->first, config.tls);
        !st.ok()) {
      return st;
    }
    if (config.queue_depth < 1 || config.durable_queue_depth < 1 || !(config.retention_hours > 0)) {
      return absl::InvalidArgumentError(
          "--queue-depth, --durable-queue-depth and --retention-hours must be positive");
    }
    if (absl::Status st = os::MakeDirectories(config.state_dir, 0700); !st.ok()) return st;

    auto engine = sandbox::Engine::Create(EngineOptionsFor(config));
    if (!engine.ok()) return engine.status();
    engine_ = std::move(*engine);
    auto runner_id = RunnerId(config);
    if (!runner_id.ok()) return runner_id.status();
    auto sealer = LoadSealer(config);
    if (!sealer.ok()) return sealer.status();
    auto store = OpenStore(config);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    sealer_ = std::make_unique<CredentialSealer>(std::move(*sealer));
    jwks_ = std::make_unique<base::JwksCache>(MakeJwksFetcher(config));
    auth_ = std::make_unique<CallerAuth>(jwks_->AsLookup(), config.audience, base::NowUnixSecs);

    const auto retention_ms = static_cast<int64_t>(config.retention_hours * 3600 * 1000);
    ExecutorOptions executor_options;
    executor_options.workers =
        config.workers > 0 ? config.workers
                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    executor_options.queue_depth = config.queue_depth;
    executor_options.durable_queue_depth = config.durable_queue_depth;
    // A SQLite store has one executor draining it; PostgreSQL may have several.
    executor_options.paced_retry_after = IsSqliteStore(StoreSpec(config));
    executor_options.runner_id = *runner_id;
    executor_ = std::make_unique<Executor>(executor_options, engine_.get(), store_.get(),
                                           sealer_.get(), &metrics_);
    if (absl::Status st = executor_->Start(); !st.ok()) return st;

    auto codex_options = CodexOptions(config);
    if (!codex_options.ok()) return codex_options.status();
    codex_ = std::make_unique<CodexRunner>(std::move(*codex_options), engine_.get());
    codex_->StartHomeTemplate();
    codex_attach_ = std::make_unique<CodexAttachRegistry>(base::NowUnixMs);

    HttpApiDeps deps{auth_.get(),   executor_.get(), store_.get(),
                     sealer_.get(), &metrics_,       SelfCheck()};
    deps.codex = codex_.get();
    deps.codex_attach = codex_attach_.get();
    deps.runtimes = &engine_->options().runtimes;
    deps.warm_python_stats = [engine = engine_.get()] { return engine->warm_python_stats(); };
    router_ = BuildHttpApi(
        {config.async_enabled, config.nyxid_base_url, retention_ms, config.metrics_token}, deps);
    http::ServerOptions server_options;
    server_options.host = listen->first;
    server_options.port = listen->second;
    server_options.io_threads = config.http_threads;
    server_options.tls = config.tls.listen;
    server_options.serve_in_process = config.serve_in_process;
    auto server = http::Server::Start(
        server_options, [this](http::Request& request) { return router_->Handle(request); });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    sweeper_ = std::thread([this] { SweepLoop(); });
    const absl::Status codex = codex_->Availability();
    base::Log(LogLevel::kInfo, "chrono.started", "",
              {{"port", server_->port()},
               {"replica", *runner_id},
               {"workers", executor_options.workers},
               {"warm_python", config.warm_python},
               {"async_enabled", config.async_enabled},
               {"codex_available", codex.ok()},
               {"codex_backend", config.codex_backend}});
    return absl::OkStatus();
  }

 private:
  // The Codex runner's settings; errors name the flag. A missing model or
  // binary is no error: the runner then reports itself unavailable.
  absl::StatusOr<CodexRunnerOptions> CodexOptions(const ServiceConfig& config) const {
    CodexRunnerOptions options;
    if (!config.codex_path.empty()) options.codex_path = config.codex_path;
    auto backend = sandbox::ParseBackend(config.codex_backend);
    if (!backend) return absl::InvalidArgumentError("--codex-backend must be gvisor or native");
    options.backend = *backend;
    options.backend_available = *backend == sandbox::BackendKind::kNative ||
                                os::IsExecutable(engine_->options().runsc_path);
    if (!config.codex_model.empty()) {
      if (absl::Status st = ValidateCodexModelName(config.codex_model); !st.ok()) return st;
    }
    options.model = config.codex_model;
    if (config.codex_max_concurrent < 1) {
      return absl::InvalidArgumentError("--codex-max-concurrent must be positive");
    }
    options.max_concurrent = config.codex_max_concurrent;
    options.nyxid_url = config.nyxid_base_url;
    options.nyxid_tls = config.tls.peers;
    return options;
  }

  // Runs one trivial program to prove the engine works on this host.
  bool SelfCheck() {
    sandbox::RunSpec spec;
    spec.language = sandbox::Language::kBash;
    spec.source = "exit 0";
    spec.limits.wall_timeout_secs = 10;
    auto result = engine_->Run(spec);
    bool ok = result.ok() && result->verdict == sandbox::Verdict::kOk;
    if (!ok) {
      base::Log(LogLevel::kError, "chrono.engine_self_check_failed", "",
                {{"error", result.ok() ? std::string(sandbox::VerdictName(result->verdict))
                                       : std::string(result.status().message())}});
    }
    return ok;
  }

  void SweepLoop() {
    for (;;) {
      auto expired = store_->ExpireOld(base::NowUnixMs(), kTombstoneKeepMs);
      if (expired.ok() && *expired > 0) {
        base::Log(LogLevel::kInfo, "operations.expired", "", {{"count", *expired}});
      }
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopped_), kExpirySweepInterval)) return;
    }
  }

  std::unique_ptr<sandbox::Engine> engine_;
  std::unique_ptr<OperationStore> store_;
  std::unique_ptr<CredentialSealer> sealer_;
  std::unique_ptr<base::JwksCache> jwks_;
  std::unique_ptr<CallerAuth> auth_;
  Metrics metrics_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<CodexRunner> codex_;
  std::unique_ptr<CodexAttachRegistry> codex_attach_;
  std::unique_ptr<http::Router> router_;
  std::unique_ptr<http::Server> server_;
  std::thread sweeper_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ChronoService>> ChronoService::Start(const ServiceConfig& config) {
  auto service = std::make_unique<Service>();
  if (absl::Status st = service->Init(config); !st.ok()) {
    service->Stop();
    return st;
  }
  return std::unique_ptr<ChronoService>(std::move(service));
}

}  // namespace aevatar::chrono
