#include "nyxid/api/service.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/login_throttle.h"
#include "http/client.h"
#include "http/server.h"
#include "nyxid/api/http_api.h"
#include "nyxid/api/nyxid_metrics.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "nyxid/nodes/node_hub.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/routes/route_ops.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/store/postgres_nyxid.h"
#include "nyxid/tokens/authenticator.h"
#include "nyxid/tokens/signing_keys.h"
#include "nyxid/tokens/token_service.h"
#include "os/atomic_file.h"
#include "store/store_spec.h"

namespace aevatar::nyxid {
namespace {

// A retired signing key stays published for the longest token lifetime plus
// clock skew.
constexpr int64_t kPublishAfterRetireSecs = kAccessTokenTtlSecs + 300;

absl::Status LoadBootstrap(const std::string& path, NyxidStore& store) {
  if (path.empty()) return EnsureAutoConnectedRoutes(store, base::NowUnixMs());
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read --bootstrap ", path));
  std::ostringstream text;
  text << in.rdbuf();
  auto spec = ParseBootstrap(text.str());
  if (!spec.ok()) return spec.status();
  const size_t slash = path.rfind('/');
  const std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (absl::Status st = LoadProviderKeys(*spec, base_dir); !st.ok()) return st;
  return ApplyBootstrap(*spec, store, base::NowUnixMs());
}

// LoadBootstrap, for replicas sharing a database that start at once with the
// same file: a row another replica inserted between this one's lookup and
// insert is AlreadyExists, and applying the (idempotent) file again finds it.
absl::Status ApplyBootstrapBesideReplicas(const std::string& path, NyxidStore& store) {
  constexpr int kAttempts = 3;
  absl::Status st;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    st = LoadBootstrap(path, store);
    if (!absl::IsAlreadyExists(st)) return st;
  }
  return st;
}

class Service : public NyxidService {
 public:
  ~Service() override { Stop(); }

  uint16_t port() const override { return server_->port(); }

  void Stop() override {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    if (server_) server_->Stop();
  }

  absl::Status Init(const ServiceConfig& config) {
    auto listen = http::ParseListenAddress(config.listen);
    if (!listen.ok()) return listen.status();
    if (config.state_dir.empty()) return absl::InvalidArgumentError("--state-dir is required");
    if (config.proxy_timeout < std::chrono::milliseconds(1) ||
        config.proxy_timeout > std::chrono::seconds(3600)) {
      return absl::InvalidArgumentError("the proxy timeout must be 1 ms..3600 s");
    }
    if (!config.public_url.empty() && config.public_url.rfind("http://", 0) != 0 &&
        config.public_url.rfind("https://", 0) != 0) {
      return absl::InvalidArgumentError("--public-url must be an http:// or https:// URL");
    }
    if (absl::Status st = http::CheckServiceTls("nyxid", listen->first, config.tls); !st.ok()) {
      return st;
    }
    if (absl::Status st = os::MakeDirectories(config.state_dir, 0700); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot create --state-dir: ", st.message()));
    }
    // The at-rest key seals the catalog's provider keys (and, on PostgreSQL,
    // the signing keys) in the store.
    auto at_rest_key = os::LoadOrCreateKeyFile(config.state_dir + "/at-rest.key", 32);
    if (!at_rest_key.ok()) return at_rest_key.status();
    auto signing_keys = OpenStores(config, std::move(*at_rest_key));
    if (!signing_keys.ok()) return signing_keys.status();
    auto keys = KeyRing::LoadOrCreate(std::move(*signing_keys), base::NowUnixSecs(),
                                      kPublishAfterRetireSecs);
    if (!keys.ok()) return keys.status();
    keys_ = std::move(*keys);
    if (absl::Status st = ApplyBootstrapBesideReplicas(config.bootstrap_file, *store_); !st.ok())
      return st;

    std::string issuer = config.public_url.empty() ? "nyxid" : config.public_url;
    while (issuer.size() > 1 && issuer.back() == '/') issuer.pop_back();
    tokens_ = std::make_unique<TokenService>(keys_.get(), issuer, base::NowUnixSecs);
    auth_ = std::make_unique<Authenticator>(store_.get(), tokens_.get());
    login_throttle_ =
        std::make_unique<base::LoginThrottle>(base::LoginThrottleOptions{}, base::NowUnixMs);
    HttpApiDeps deps{store_.get(), keys_.get(),          tokens_.get(),
                     auth_.get(),  config.proxy_timeout, config.tls.peers};
    deps.login_throttle = login_throttle_.get();
    deps.nodes = nodes_.get();
    deps.hub = &hub_;
    deps.metrics = &metrics_;
    deps.metrics_token = config.metrics_token;
    router_ = BuildHttpApi(deps);

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
    base::Log(base::LogLevel::kInfo, "nyxid.started", "",
              {{"port", server_->port()},
               {"kid", keys_->current_kid()},
               {"store", config.store.empty() ? "sqlite" : "postgresql"},
               {"proxy_timeout_ms", config.proxy_timeout.count()}});
    return absl::OkStatus();
  }

 private:
  // Opens store_ and nodes_ as config.store says; returns where the signing
  // keys live.
  absl::StatusOr<std::unique_ptr<SigningKeyStorage>> OpenStores(const ServiceConfig& config,
                                                                std::string at_rest_key) {
    const std::string& spec = config.store;
    if (store::NamesDefaultSqlite(spec)) {
      auto store = OpenSqliteNyxidStore(config.state_dir + "/nyxid.db", std::move(at_rest_key));
      if (!store.ok()) return store.status();
      store_ = std::move(*store);
      auto nodes = OpenSqliteNodeStore(config.state_dir + "/nodes.db");
      if (!nodes.ok()) return nodes.status();
      nodes_ = std::move(*nodes);
      return FileSigningKeyStorage(config.state_dir);
    }
    std::optional<std::string> conninfo = store::PostgresConninfo(spec);
    if (!conninfo) {
      return absl::InvalidArgumentError("--store must be postgresql://… or postgres:CONNINFO");
    }
    auto pg = OpenPostgresNyxid(*conninfo, std::move(at_rest_key));
    if (!pg.ok()) return pg.status();
    store_ = std::move(pg->store);
    nodes_ = std::move(pg->nodes);
    return std::move(pg->signing_keys);
  }

  std::unique_ptr<NyxidStore> store_;
  std::unique_ptr<NodeStore> nodes_;
  NodeHub hub_;
  NyxidMetrics metrics_;
  std::unique_ptr<KeyRing> keys_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<base::LoginThrottle> login_throttle_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<http::Router> router_;
  std::unique_ptr<http::Server> server_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<NyxidService>> NyxidService::Start(const ServiceConfig& config) {
  auto service = std::make_unique<Service>();
  if (absl::Status st = service->Init(config); !st.ok()) {
    service->Stop();
    return st;
  }
  return std::unique_ptr<NyxidService>(std::move(service));
}

}  // namespace aevatar::nyxid
