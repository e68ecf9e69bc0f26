#include "codex/fake_nyxid.h"

#include <set>

#include "base/crypto.h"

namespace aevatar::orchestrator::testing {

using nlohmann::json;

struct FakeNyxid::State {
  absl::Mutex mu;
  json routes ABSL_GUARDED_BY(mu) = json::array();
  CodexHandler codex ABSL_GUARDED_BY(mu);
  CodexHandler ssh ABSL_GUARDED_BY(mu);
  std::vector<RecordedRequest> requests ABSL_GUARDED_BY(mu);
  struct Key {
    std::string id, secret;
    json allowed;
    bool revoked = false;
  };
  std::vector<Key> keys ABSL_GUARDED_BY(mu);
  std::set<std::string> revoked_subjects ABSL_GUARDED_BY(mu);
};

namespace {

http::Response Problem(int status, const char* code) {
  return FakeNyxid::Reply(status, {{"code", code}, {"status", status}});
}

}  // namespace

http::Response FakeNyxid::Reply(int status, const json& body) {
  return http::JsonResponse(status, body.dump());
}

json FakeNyxid::ChronoRoute() {
  return {{"id", kChronoRouteId},
          {"slug", "chrono-sandbox"},
          {"label", "chrono-sandbox"},
          {"catalog_service_id", "chrono-sandbox"},
          {"owner", {{"type", "user"}, {"id", kUser}}},
          {"active", true},
          {"forward_access_token", true},
          {"inject_delegation_token", true},
          {"delegation_token_scope", "proxy:* sandbox:execute"},
          {"auto_connected", true},
          {"credential_source", {{"allowed", false}}},
          {"node_id", nullptr}};
}

json FakeNyxid::LlmRoute() {
  json route = ChronoRoute();
  route["id"] = kLlmRouteId;
  route["slug"] = "chrono-llm-public";
  route["label"] = "chrono-llm-public";
  route["catalog_service_id"] = "chrono-llm-public";
  route["forward_access_token"] = false;
  route["inject_delegation_token"] = false;
  route["delegation_token_scope"] = "";
  return route;
}

FakeNyxid::FakeNyxid() : state_(std::make_shared<State>()) {
  SetRoutes({ChronoRoute(), LlmRoute()});
  OnCodexExecute([](const http::Request&) {
    return Reply(200, {{"status", "succeeded"},
                       {"target", "managed_sandbox"},
                       {"output", "CODEX_EXEC_READY\n"},
                       {"exit_code", 0},
                       {"diagnostic_id", "diag_runner123"},
                       {"elapsed_ms", 250}});
  });
  OnSshExec([](const http::Request&) {
    return Reply(
        200,
        {{"exit_code", 0}, {"timed_out", false}, {"stdout", "CODEX_EXEC_READY\n"}, {"stderr", ""}});
  });
  auto server = http::Server::Start(
      {}, [this, keep = state_](http::Request& request) { return Handle(request); });
  if (server.ok()) server_ = std::move(*server);
}

FakeNyxid::~FakeNyxid() {
  if (server_) server_->Stop();
}

std::string FakeNyxid::url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

void FakeNyxid::SetRoutes(std::vector<json> routes) {
  absl::MutexLock lock(&state_->mu);
  state_->routes = json(std::move(routes));
}

void FakeNyxid::OnCodexExecute(CodexHandler handler) {
  absl::MutexLock lock(&state_->mu);
  state_->codex = std::move(handler);
}

void FakeNyxid::OnSshExec(CodexHandler handler) {
  absl::MutexLock lock(&state_->mu);
  state_->ssh = std::move(handler);
}

std::vector<RecordedRequest> FakeNyxid::Requests() const {
  absl::MutexLock lock(&state_->mu);
  return state_->requests;
}

int FakeNyxid::Count(const std::string& prefix) const {
  int n = 0;
  for (const RecordedRequest& r : Requests()) n += r.path.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

std::vector<std::string> FakeNyxid::MintedKeys() const {
  absl::MutexLock lock(&state_->mu);
  std::vector<std::string> out;
  for (const auto& key : state_->keys) out.push_back(key.secret);
  return out;
}

void FakeNyxid::RevokeAllKeys() {
  absl::MutexLock lock(&state_->mu);
  for (auto& key : state_->keys) key.revoked = true;
}

// Introspection as NyxID answers it: an unrevoked Agent Key of this fake
// (with its allowed_services), or
// a signed token (aevatar verified its signature before asking) reported
// active with its kind and subject, unless RevokeTokensOf named the subject.
http::Response FakeNyxid::Introspect(const http::Request& request) {
  const std::string token = json::parse(request.body, nullptr, false).value("token", "");
  absl::MutexLock lock(&state_->mu);
  for (const auto& key : state_->keys) {
    if (key.secret == token) {
      if (key.revoked) return Reply(200, {{"active", false}});
      return Reply(200, {{"active", true},
                         {"kind", "AgentKey"},
                         {"sub", kUser},
                         {"allowed_services", key.allowed}});
    }
  }
  const size_t first = token.find('.');
  const size_t second = token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos)
    return Reply(200, {{"active", false}});
  auto payload = base::Base64UrlDecode(token.substr(first + 1, second - first - 1));
  const json claims = payload.ok() ? json::parse(*payload, nullptr, false) : json();
  const std::string subject = claims.is_object() ? claims.value("sub", "") : "";
  if (subject.empty() || state_->revoked_subjects.count(subject) > 0) {
    return Reply(200, {{"active", false}});
  }
  const bool access = claims.value("token_kind", "") == "access";
  return Reply(
      200,
      {{"active", true}, {"kind", access ? "AccessToken" : "ProxyDelegation"}, {"sub", subject}});
}

void FakeNyxid::RevokeTokensOf(const std::string& subject) {
  absl::MutexLock lock(&state_->mu);
  state_->revoked_subjects.insert(subject);
}

http::Response FakeNyxid::Handle(const http::Request& request) {
  // aevatar's ingress asks about every credential it is shown; the tests
  // count the requests made on a caller's behalf, so these are not recorded.
  if (request.path == "/api/v1/tokens/introspect") return Introspect(request);
  const std::string bearer = http::BearerToken(request).value_or("");
  CodexHandler codex;
  CodexHandler ssh;
  {
    absl::MutexLock lock(&state_->mu);
    state_->requests.push_back({request.method, request.path, request.query, bearer,
                                request.headers.Get("Idempotency-Key").value_or(""), request.body});
    codex = state_->codex;
    ssh = state_->ssh;
  }
  // kHumanToken, or a signed access token (aevatar forwards the caller's JWS).
  bool human = bearer == kHumanToken || bearer.rfind("eyJ", 0) == 0;
  bool live_key = false;
  {
    absl::MutexLock lock(&state_->mu);
    for (const auto& key : state_->keys)
      live_key = live_key || (key.secret == bearer && !key.revoked);
  }
  if (!human && !live_key) return Problem(401, "TOKEN_INVALID");
  if (request.path == "/api/v1/me") return Reply(200, {{"id", kUser}, {"orgs", json::array()}});
  if (request.path == "/api/v1/keys") {
    absl::MutexLock lock(&state_->mu);
    return Reply(200, {{"keys", state_->routes}});
  }
  if (request.path.rfind("/api/v1/agent-keys", 0) == 0) {
    if (!human) return Problem(403, "HUMAN_TOKEN_REQUIRED");
    absl::MutexLock lock(&state_->mu);
    if (request.method == "POST") {
      json body = json::parse(request.body, nullptr, false);
      State::Key key{
          base::RandomId("ak_"), "nyxid_ag_" + base::RandomId(""),
          body.is_object() ? body.value("allowed_services", json::array()) : json::array()};
      state_->keys.push_back(key);
      return Reply(201, {{"id", key.id},
                         {"key", key.secret},
                         {"allowed_services", key.allowed},
                         {"revoked", false}});
    }
    if (request.method == "GET") {
      json list = json::array();
      for (const auto& key : state_->keys) {
        list.push_back(
            {{"id", key.id}, {"allowed_services", key.allowed}, {"revoked", key.revoked}});
      }
      return Reply(200, {{"agent_keys", list}});
    }
    if (request.method == "DELETE") {
      const std::string id = request.path.substr(request.path.rfind('/') + 1);
      for (auto& key : state_->keys) key.revoked = key.revoked || key.id == id;
      http::Response gone;
      gone.status = 204;
      return gone;
    }
  }
  if (request.path.rfind("/api/v1/ssh/", 0) == 0 && request.method == "POST") return ssh(request);
  if (request.path.rfind("/api/v1/proxy/", 0) == 0) {
    // POST /codex/execute and /codex/runs/{run_id}/cancel; the handler
    // tells them apart.
    if (request.path.rfind("/api/v1/proxy/chrono-sandbox/codex/", 0) != 0) {
      return Problem(404, "PROXY_ROUTE_NOT_FOUND");
    }
    return codex(request);
  }
  return Problem(404, "NOT_FOUND");
}

}  // namespace aevatar::orchestrator::testing
