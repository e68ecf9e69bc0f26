#ifndef AEVATAR_NYXID_API_HTTP_API_H_
#define AEVATAR_NYXID_API_HTTP_API_H_

#include <chrono>
#include <memory>
#include <string>

#include "http/client.h"
#include "http/openapi.h"
#include "http/router.h"
#include "nyxid/routes/facts_digest_cache.h"
#include "nyxid/store/cached_facts.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/tokens/authenticator.h"
#include "nyxid/tokens/signing_keys.h"
#include "nyxid/tokens/token_service.h"

namespace aevatar::base {
class LoginThrottle;
}  // namespace aevatar::base

namespace aevatar::nyxid {

class NodeStore;
class NodeHub;
class NyxidMetrics;

// The proxy's own deadline for one upstream exchange (connect, request, the
// whole answer, streamed or not); past it the caller gets 504
// PROXY_DEADLINE_EXCEEDED. 315 s is the NyxID ingress layer of the managed
// Codex deadline chain: Codex run 180 s < aevatar managed request 300 s <
// NyxID proxy 315 s < NyxID client 330 s < workflow step 360 s, so the
// chrono-sandbox route outlasts the request aevatar makes through it and
// aevatar's client sees the inner layer's typed timeout first.
inline constexpr std::chrono::milliseconds kDefaultProxyTimeout = std::chrono::seconds(315);

// Everything the handlers use; owned by the service and outliving the router.
struct HttpApiDeps {
  NyxidStore* store = nullptr;
  KeyRing* keys = nullptr;  // rotated by a platform admin
  const TokenService* tokens = nullptr;
  const Authenticator* auth = nullptr;
  std::chrono::milliseconds proxy_timeout = kDefaultProxyTimeout;
  // What an https upstream is verified against besides the system store, and
  // the client certificate shown to one that asks (mutual TLS).
  http::ClientTls upstream_tls;
  // Kept-alive upstream connections the proxy reuses (an exchange holds a
  // reference, so one outliving the service still has its pool).
  std::shared_ptr<http::ConnectionPool> upstream_pool = std::make_shared<http::ConnectionPool>();
  // Password-guessing limits of the login; null: none (in-process tests).
  base::LoginThrottle* login_throttle = nullptr;
  // Nodes and SSH services (nodes/); null: those routes answer 501.
  NodeStore* nodes = nullptr;
  NodeHub* hub = nullptr;
  // The /metrics series; null: nothing is counted and GET /metrics is 503
  // METRICS_UNAVAILABLE (in-process tests).
  NyxidMetrics* metrics = nullptr;
  // The bearer token that reads /metrics; "" = loopback peers only.
  std::string metrics_token = "";
  // Callers' facts digests the proxy checks reused admissions against, per
  // facts generation (shared by copies of these deps).
  std::shared_ptr<FactsDigestCache> facts_digests = std::make_shared<FactsDigestCache>();
  // The proxy's reads of `store`, per facts generation; null: BuildHttpApi
  // makes them.
  std::shared_ptr<CachedFacts> cached_facts = nullptr;
};

// The broker's HTTP API (docs/nyxid.md):
//   POST /api/v1/auth/login, POST /api/v1/auth/logout, POST /api/v1/auth/password,
//   POST /api/v1/admin/signing-keys/rotate, GET /api/v1/me, GET /.well-known/jwks.json,
//   POST /api/v1/tokens/introspect, POST|GET /api/v1/agent-keys,
//   DELETE /api/v1/agent-keys/{id}, GET /api/v1/keys,
//   GET|POST /api/v1/user-services, GET|PUT /api/v1/user-services/{id},
//   POST /api/v1/services/{id}/resync-identity, GET /api/v1/catalog,
//   ANY /api/v1/proxy/{slug}/{path...}, GET /healthz, GET /readyz, GET /metrics;
//   nodes and SSH services: POST /api/v1/nodes/register-token,
//   POST /api/v1/nodes/register, GET /api/v1/nodes, DELETE /api/v1/nodes/{id},
//   GET /api/v1/nodes/ws, POST /api/v1/ssh-services,
//   POST /api/v1/ssh/{service}/exec; GET /openapi.json.
// Errors are problem+json with a typed code and a diagnostic id; each request
// logs one line (route pattern, status, code, diagnostic id, credential
// kind), never a credential, body or route id.
std::unique_ptr<http::Router> BuildHttpApi(const HttpApiDeps& deps);

// The files of NyxID's OpenAPI document (src/nyxid/api/openapi/, compiled
// in): what GET /openapi.json serves and the coverage test checks.
std::vector<http::OpenApiFragment> OpenApiFragments();

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_API_HTTP_API_H_
