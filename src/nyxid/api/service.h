#ifndef AEVATAR_NYXID_API_SERVICE_H_
#define AEVATAR_NYXID_API_SERVICE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "http/service_tls.h"
#include "nyxid/api/http_api.h"

namespace aevatar::nyxid {

// Configuration of `nyxid serve`. Validated once at start-up.
struct ServiceConfig {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0 picks a free one
  std::string state_dir;                  // required: nyxid.db and signing-keys.json (0600)
  // Where the durable state lives: "" or "sqlite" (the default) the SQLite files in
  // state_dir; a libpq URI postgresql://… (or postgres://…, or "postgres:"
  // and anything libpq takes) a PostgreSQL database that replicas share
  // (store/postgres_nyxid.h). state_dir then holds only at-rest.key, which
  // every replica must share.
  std::string store;
  std::string bootstrap_file;  // optional YAML seed, applied idempotently at start
  // The URL callers and services use to reach this broker; becomes the
  // tokens' "iss". Empty: "nyxid".
  std::string public_url;
  // The proxy's deadline per upstream exchange, 1 ms..3600 s (default
  // kDefaultProxyTimeout, 315 s; tests of the deadline chain scale it down).
  std::chrono::milliseconds proxy_timeout = kDefaultProxyTimeout;
  int http_threads = 2;
  // Also serve this process's own calls to `listen` without TCP
  // (http::ServerOptions::serve_in_process): `aevatar up` runs the services
  // in one process.
  bool serve_in_process = false;
  // The listener's TLS, and the proxy's to its upstreams: `tls.peers.ca_file`
  // is trusted for https upstreams (catalog and custom base URLs, e.g. a
  // private CA) in addition to the system store, and its client certificate
  // is shown to an upstream that asks (chrono-sandbox under mutual TLS).
  // Checked at start-up.
  http::ServiceTls tls;
  // The bearer token that reads /metrics ("" = loopback peers only).
  std::string metrics_token = "";
};

// A running broker: HTTP API, proxy, durable state (SQLite or PostgreSQL)
// and signing keys.
class NyxidService {
 public:
  // Validates `config`, creates the state dir (0700), opens and migrates the
  // store, loads or generates the signing key, applies the bootstrap file
  // and starts serving. Errors name the offending setting.
  static absl::StatusOr<std::unique_ptr<NyxidService>> Start(const ServiceConfig& config);
  virtual ~NyxidService() = default;
  virtual uint16_t port() const = 0;
  // Stops serving and joins the server threads; idempotent.
  virtual void Stop() = 0;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_API_SERVICE_H_
