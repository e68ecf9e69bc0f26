// ANY /api/v1/proxy/{slug}/{path...}?_nyxid_via={userServiceId}: the exact-route proxy.
//
//   1. authenticate the caller (access token, Agent Key or delegation token);
//      a request carrying a facts digest (routes/caller_facts.h) that no
//      longer matches is refused 412 NYXID_FACTS_CHANGED, never forwarded;
//   2. resolve _nyxid_via (required; no slug auto-resolution): the service
//      must exist, be visible, carry exactly {slug}, be active and usable by
//      this caller, and admit this credential (a delegation token only where
//      its catalog service names the token's audience);
//   3. forward to the upstream base_url + path (query kept minus
//      _nyxid_via; no link-local or metadata address, upstream_address.h), with the route's
//      credential policy applied to headers; a route of kind llm instead passes llm_route.h's
//      checks and carries the provider key, never a caller credential;
//   4-5. return the upstream answer unchanged (streamed when large), within
//      the proxy deadline.
#include <chrono>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/log_context.h"
#include "nyxid/api/api_support.h"
#include "nyxid/api/nyxid_metrics.h"
#include "nyxid/proxy/llm_route.h"
#include "nyxid/proxy/proxy_headers.h"
#include "nyxid/proxy/upstream_address.h"
#include "nyxid/proxy/upstream_exchange.h"
#include "nyxid/routes/caller_facts.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {
namespace {

constexpr char kProxyPrefix[] = "/api/v1/proxy/";
constexpr size_t kMaxProxiedResponseBytes = size_t{4} << 30;

absl::Status NotFound(std::string code, std::string detail) {
  return base::ApiError(absl::StatusCode::kNotFound, std::move(code), std::move(detail), 404);
}

// The still-encoded path after /api/v1/proxy/{slug}/, from the raw target.
std::string RawRest(const http::Request& request, const std::string& slug) {
  std::string_view target = request.target;
  target = target.substr(0, target.find('?'));
  const std::string prefix = absl::StrCat(kProxyPrefix, slug);
  if (target.substr(0, prefix.size()) != prefix) return "";
  target.remove_prefix(prefix.size());
  if (!target.empty() && target.front() == '/') target.remove_prefix(1);
  return std::string(target);
}

// The route after every check of step 2.
absl::StatusOr<UserService> ResolveRoute(FactsReads& facts, const Principal& caller,
                                         const http::Request& request, const std::string& slug) {
  auto via = request.QueryParam(kViaParam);
  if (!via || via->empty()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "NYXID_VIA_REQUIRED",
                          "_nyxid_via (the exact user service id) is required", 400);
  }
  auto route = facts.FindUserService(*via);
  if (absl::IsNotFound(route.status())) {
    return NotFound("USER_SERVICE_NOT_FOUND", "no such user service");
  }
  if (!route.ok()) return route.status();
  if (absl::Status st = CheckVisible(caller, *route); !st.ok()) return st;
  if (route->slug != slug) {
    return NotFound("ROUTE_SLUG_MISMATCH", "the user service does not carry this slug");
  }
  if (!route->active) return base::Forbidden("ROUTE_INACTIVE", "the user service is not active");
  if (absl::Status st = CheckUsable(caller, *route); !st.ok()) return st;
  if (absl::Status st = CheckCredentialAllowed(caller, *route); !st.ok()) return st;
  return route;
}

struct Upstream {
  std::string base_url;
  std::string audience;               // the delegation token's aud: the catalog slug
  std::optional<CatalogService> llm;  // set for a catalog service of kind llm
  // The catalog's delegation_audiences and allow_link_local (a custom route:
  // none, false).
  std::vector<std::string> delegation_audiences;
  bool allow_link_local = false;
};

absl::StatusOr<Upstream> ResolveUpstream(FactsReads& facts, const UserService& route) {
  if (route.node_id) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "NODE_ROUTE_NOT_HTTP",
                          "a node-relayed SSH service is reached through "
                          "POST /api/v1/ssh/{service}/exec, not the HTTP proxy",
                          409);
  }
  if (!route.catalog_service_id) return Upstream{route.base_url, route.slug, std::nullopt, {}};
  auto catalog = facts.FindCatalogService(*route.catalog_service_id);
  if (!catalog.ok()) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "CATALOG_SERVICE_MISSING",
                          "the user service's catalog service no longer exists", 409);
  }
  if (catalog->kind != ServiceKind::kHttp && catalog->kind != ServiceKind::kLlm) {
    return base::ApiError(absl::StatusCode::kUnimplemented, "ROUTE_KIND_UNSUPPORTED",
                          "this kind of service cannot be proxied over HTTP", 501);
  }
  Upstream upstream{catalog->base_url, catalog->slug, std::nullopt, catalog->delegation_audiences,
                    catalog->allow_link_local};
  if (catalog->kind == ServiceKind::kLlm) upstream.llm = std::move(*catalog);
  return upstream;
}

// The upstream headers: an llm route's fixed set with the provider key, or
// the caller's headers under the route's credential policy.
http::Headers ForwardedHeaders(const HttpApiDeps& deps, const Principal& caller,
                               const http::Request& request, const UserService& route,
                               const Upstream& upstream) {
  if (upstream.llm) return LlmUpstreamHeaders(request.headers, upstream.llm->provider_api_key);
  UpstreamCredentials credentials;
  if (route.policy.forward_access_token) credentials.authorization = caller.credential;
  if (route.policy.inject_delegation_token) {
    DelegationGrant grant = deps.tokens->DelegationForProxy(caller.user.id, upstream.audience,
                                                            route.policy.delegation_token_scope,
                                                            caller.user.tokens_not_before_ms);
    credentials.delegation_token = std::move(grant.token);
    if (grant.minted && deps.metrics != nullptr) deps.metrics->CountTokenMinted("delegation");
  }
  return UpstreamRequestHeaders(request.headers, credentials);
}

}  // namespace

http::Response HandleProxy(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  // Ambiguous framing (a Transfer-Encoding other than chunked, or one with a
  // Content-Length) never reaches here: the HTTP server refuses it and closes.
  // The facts generation first: it predates every read below, which are
  // then served from memory while it holds (store/cached_facts.h).
  auto generation = deps.store->FactsGeneration();
  if (!generation.ok()) return Problem(generation.status(), note);
  std::unique_ptr<FactsReads> facts = deps.cached_facts->At(*generation);
  const std::optional<FactsClaim> claim = ReadFactsClaim(request, *generation);
  auto caller = Authenticated(deps, request, note, facts.get());
  if (!caller.ok()) return Problem(caller.status(), note);
  // A reused admission whose facts changed is refused before anything else,
  // so the client admits again and meets whatever changed as its own error.
  auto facts_hold = FactsStillHold(deps, *caller, claim);
  if (!facts_hold.ok()) return Problem(facts_hold.status(), note);
  if (!*facts_hold) {
    http::Response refused = Problem(FactsChanged(), note);
    refused.headers.Set(kFactsChangedHeader, "1");
    return refused;
  }
  const std::string slug = request.path_params["slug"];
  if (!IsValidSlug(slug)) {
    return Problem(NotFound("USER_SERVICE_NOT_FOUND", "no such user service"), note);
  }
  auto route = ResolveRoute(*facts, *caller, request, slug);
  if (!route.ok()) return Problem(route.status(), note);
  auto upstream = ResolveUpstream(*facts, *route);
  if (!upstream.ok()) return Problem(upstream.status(), note);
  if (absl::Status st = CheckDelegationAudience(*caller, upstream->delegation_audiences);
      !st.ok()) {
    return Problem(st, note);
  }
  const std::string rest = RawRest(request, slug);
  if (upstream->llm) {
    if (absl::Status st = CheckLlmRequest(*upstream->llm, request, rest); !st.ok()) {
      return Problem(st, note);
    }
  }
  // A model call is exactly {base_url}/responses: no caller query reaches the provider.
  auto url = UpstreamUrl(upstream->base_url, rest,
                         upstream->llm ? std::string() : QueryWithoutVia(request.query));
  if (!url.ok()) return Problem(url.status(), note);
  if (absl::Status st = CheckUpstreamAddress(*url, upstream->allow_link_local); !st.ok()) {
    return Problem(st, note);
  }

  http::ClientRequest forward;
  forward.method = request.method;
  forward.url = std::move(*url);
  forward.headers = ForwardedHeaders(deps, *caller, request, *route, *upstream);
  forward.body = request.body;
  forward.timeout = deps.proxy_timeout;
  forward.max_response_bytes = kMaxProxiedResponseBytes;
  forward.tls = deps.upstream_tls;  // https upstreams only
  forward.pool = deps.upstream_pool;
  // The id this request is logged under (the caller's when sane, else a
  // fresh one), so the upstream logs the call under the same id. Not to a
  // model provider, which gets only the headers the LLM route names.
  if (!upstream->llm && !base::CurrentRequestId().empty()) {
    forward.headers.Set("X-Request-Id", base::CurrentRequestId());
  }
  const auto sent = std::chrono::steady_clock::now();
  auto response = ProxyExchange(std::move(forward));
  note.upstream_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  if (!response.ok()) return Problem(response.status(), note);
  note.upstream_status = response->status;
  return std::move(*response);
}

}  // namespace aevatar::nyxid
