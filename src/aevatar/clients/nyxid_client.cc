#include "aevatar/clients/nyxid_client.h"

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "base/log_context.h"

namespace aevatar::orchestrator {

absl::Status NyxidResponseInvalid(std::string_view document, const absl::Status& read) {
  return base::ApiError(
      absl::StatusCode::kUnavailable, kNyxidResponseInvalidCode,
      absl::StrCat("NyxID's ", std::string(document), " reply is invalid: ", read.message()), 502);
}

absl::StatusOr<Introspection> ParseIntrospection(const nlohmann::json& body) {
  constexpr char kDocument[] = "introspection";
  if (!body.is_object()) {
    return NyxidResponseInvalid(kDocument, absl::InvalidArgumentError("the body is not an object"));
  }
  auto active = base::RequiredBool(body, "active");
  auto kind = base::OptionalString(body, "kind");
  auto subject = base::OptionalString(body, "sub");
  for (const absl::Status& st : {active.status(), kind.status(), subject.status()}) {
    if (!st.ok()) return NyxidResponseInvalid(kDocument, st);
  }
  Introspection out{*active, kind->value_or(""), subject->value_or(""), {}};
  if (auto allowed = body.find("allowed_services"); allowed != body.end() && !allowed->is_null()) {
    const absl::Status wrong =
        absl::InvalidArgumentError("field 'allowed_services' must be an array of strings");
    if (!allowed->is_array()) return NyxidResponseInvalid(kDocument, wrong);
    for (const nlohmann::json& entry : *allowed) {
      if (!entry.is_string()) return NyxidResponseInvalid(kDocument, wrong);
      out.allowed_services.push_back(entry.get<std::string>());
    }
  }
  return out;
}

NyxidClient::NyxidClient(std::string base_url, std::string introspection_secret,
                         std::chrono::milliseconds read_timeout, http::ClientTls tls)
    : base_url_(std::move(base_url)),
      introspection_secret_(std::move(introspection_secret)),
      read_timeout_(read_timeout),
      tls_(std::move(tls)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

NyxidReply NyxidClient::Exchange(const std::string& method, const std::string& path,
                                 const std::string& bearer, const std::string& body,
                                 const http::Headers& extra_headers,
                                 std::chrono::milliseconds timeout,
                                 size_t max_response_bytes) const {
  http::ClientRequest request;
  request.max_response_bytes = max_response_bytes;
  request.method = method;
  request.url = base_url_ + path;
  request.timeout = timeout;
  request.tls = tls_;
  request.pool = pool_;
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  // The request being handled on this thread, if any: NyxID (and, through
  // its proxy, the upstream) logs the call under the same request id.
  if (!base::CurrentRequestId().empty())
    request.headers.Set("X-Request-Id", base::CurrentRequestId());
  for (const auto& [name, value] : extra_headers.fields()) request.headers.Set(name, value);
  request.body = body;
  NyxidReply reply;
  auto response = http::Fetch(request);
  if (!response.ok()) {  // status 0: the exchange failed
    reply.transport = response.status().code();
    return reply;
  }
  reply.status = response->status;
  reply.headers = response->headers;
  reply.raw_body = response->body;
  // Depth-bounded and non-throwing; anything that is not JSON stays null.
  if (auto body = base::ParseJson(response->body); body.ok()) reply.body = *std::move(body);
  return reply;
}

NyxidReply NyxidClient::GetMe(const std::string& bearer) const {
  return Exchange("GET", "/api/v1/me", bearer, "", {}, read_timeout_);
}

NyxidReply NyxidClient::GetKeys(const std::string& bearer) const {
  return Exchange("GET", "/api/v1/keys", bearer, "", {}, read_timeout_);
}

NyxidReply NyxidClient::RevalidateKeys(const std::string& bearer,
                                       const std::string& facts_digest) const {
  http::Headers headers;
  headers.Set("If-None-Match", "\"" + facts_digest + "\"");
  return Exchange("GET", "/api/v1/keys", bearer, "", headers, read_timeout_);
}

NyxidReply NyxidClient::PutUserService(const std::string& bearer, const std::string& id,
                                       const nlohmann::json& patch) const {
  return Exchange("PUT", "/api/v1/user-services/" + http::PercentEncode(id), bearer, patch.dump(),
                  {}, read_timeout_);
}

NyxidReply NyxidClient::PostUserService(const std::string& bearer,
                                        const nlohmann::json& body) const {
  return Exchange("POST", "/api/v1/user-services", bearer, body.dump(), {}, read_timeout_);
}

NyxidReply NyxidClient::Introspect(const std::string& token) const {
  return Exchange("POST", "/api/v1/tokens/introspect", introspection_secret_,
                  nlohmann::json{{"token", token}}.dump(), {}, read_timeout_);
}

absl::StatusOr<std::string> NyxidClient::FetchJwks() const {
  NyxidReply reply = Exchange("GET", "/.well-known/jwks.json", "", "", {}, read_timeout_);
  if (reply.status != 200) return absl::UnavailableError("NyxID's JWKS is unavailable");
  return reply.raw_body;
}

NyxidReply NyxidClient::Proxy(const std::string& bearer, const std::string& method,
                              const std::string& slug, const std::string& path,
                              const std::string& route_id, const std::string& body,
                              const http::Headers& extra_headers, std::chrono::milliseconds timeout,
                              size_t max_response_bytes) const {
  const std::string target = "/api/v1/proxy/" + http::PercentEncode(slug) + "/" + path +
                             "?_nyxid_via=" + http::PercentEncode(route_id);
  return Exchange(method, target, bearer, body, extra_headers, timeout, max_response_bytes);
}

NyxidReply NyxidClient::CreateAgentKey(const std::string& bearer, const std::string& label,
                                       const std::vector<std::string>& allowed_services) const {
  const nlohmann::json body = {{"label", label}, {"allowed_services", allowed_services}};
  return Exchange("POST", "/api/v1/agent-keys", bearer, body.dump(), {}, read_timeout_);
}

NyxidReply NyxidClient::ListAgentKeys(const std::string& bearer) const {
  return Exchange("GET", "/api/v1/agent-keys", bearer, "", {}, read_timeout_);
}

NyxidReply NyxidClient::Login(const std::string& username, const std::string& password,
                              const std::string& client_address) const {
  const nlohmann::json body = {{"username", username}, {"password", password}};
  http::Headers headers;
  if (!client_address.empty() && !introspection_secret_.empty()) {
    headers.Set("X-Forwarded-For", client_address);
  }
  const std::string vouching = client_address.empty() ? "" : introspection_secret_;
  return Exchange("POST", "/api/v1/auth/login", vouching, body.dump(), headers, read_timeout_);
}

NyxidReply NyxidClient::SshExec(const std::string& bearer, const std::string& service,
                                const nlohmann::json& body,
                                std::chrono::milliseconds timeout) const {
  return Exchange("POST", "/api/v1/ssh/" + http::PercentEncode(service) + "/exec", bearer,
                  body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), {}, timeout,
                  kMaxSshReplyBytes);
}

NyxidReply NyxidClient::RevokeAgentKey(const std::string& bearer, const std::string& id) const {
  return Exchange("DELETE", "/api/v1/agent-keys/" + http::PercentEncode(id), bearer, "", {},
                  read_timeout_);
}

}  // namespace aevatar::orchestrator
