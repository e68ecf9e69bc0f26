#include "aevatar/clients/nyxid_client.h"

namespace aevatar::orchestrator {

NyxidClient::NyxidClient(std::string base_url, std::string introspection_secret,
                         std::chrono::milliseconds read_timeout)
    : base_url_(std::move(base_url)),
      introspection_secret_(std::move(introspection_secret)),
      read_timeout_(read_timeout) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

NyxidReply NyxidClient::Exchange(const std::string& method, const std::string& path,
                                 const std::string& bearer, const std::string& body,
                                 const http::Headers& extra_headers,
                                 std::chrono::milliseconds timeout) const {
  http::ClientRequest request;
  request.method = method;
  request.url = base_url_ + path;
  request.timeout = timeout;
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  for (const auto& [name, value] : extra_headers.fields()) request.headers.Set(name, value);
  request.body = body;
  NyxidReply reply;
  auto response = http::Fetch(request);
  if (!response.ok()) return reply;  // status 0: the exchange failed
  reply.status = response->status;
  reply.headers = response->headers;
  reply.raw_body = response->body;
  reply.body = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  return reply;
}

NyxidReply NyxidClient::GetMe(const std::string& bearer) const {
  return Exchange("GET", "/api/v1/me", bearer, "", {}, read_timeout_);
}

NyxidReply NyxidClient::GetKeys(const std::string& bearer) const {
  return Exchange("GET", "/api/v1/keys", bearer, "", {}, read_timeout_);
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
                              const http::Headers& extra_headers,
                              std::chrono::milliseconds timeout) const {
  const std::string target = "/api/v1/proxy/" + http::PercentEncode(slug) + "/" + path +
                             "?_nyxid_via=" + http::PercentEncode(route_id);
  return Exchange(method, target, bearer, body, extra_headers, timeout);
}

}  // namespace aevatar::orchestrator
