#ifndef AEVATAR_AEVATAR_CLIENTS_NYXID_CLIENT_H_
#define AEVATAR_AEVATAR_CLIENTS_NYXID_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// The typed error of a NyxID reply that breaks NyxID's contract (not JSON,
// a member of the wrong type): 502, never a crash and never a default.
inline constexpr char kNyxidResponseInvalidCode[] = "NYXID_RESPONSE_INVALID";

// Returns base::ApiError(kUnavailable, kNyxidResponseInvalidCode, …, 502)
// naming the `document` ("inventory", "introspection", …) and `read`'s
// message (json_read messages name a field, never a value).
absl::Status NyxidResponseInvalid(std::string_view document, const absl::Status& read);

// NyxID's answer to one exchange: its status and JSON body (status 0 when
// the exchange itself failed: connection refused, timeout). `body` is the
// depth-bounded parse of `raw_body`, or null when it is not JSON; read it only
// through base/json_read.h or a typed parser (ParseKeysInventory,
// ParseIntrospection, ParseExecutionStatus, ...).
struct NyxidReply {
  int status = 0;
  nlohmann::json body;
  http::Headers headers;
  std::string raw_body;
  // Why an exchange failed when status is 0: DeadlineExceeded (the timeout
  // passed), ResourceExhausted (the body exceeded the limit), Unavailable
  // (no connection), ...; kOk when an answer arrived.
  absl::StatusCode transport = absl::StatusCode::kOk;
};

// POST /api/v1/tokens/introspect's answer.
struct Introspection {
  bool active = false;
  std::string kind;     // "AgentKey", "HumanBearer", ...; "" when absent
  std::string subject;  // "sub"; "" when absent
  // An Agent Key's "allowed_services" (route ids or slugs); empty when absent
  // or empty: the key is unrestricted.
  std::vector<std::string> allowed_services;
};

// Parses {"active": bool, "kind"?: string, "sub"?: string,
// "allowed_services"?: [string], ...}. An inactive answer may omit the rest.
// NYXID_RESPONSE_INVALID when the body is not an object or a member has
// another type (an allowed_services entry that is not a string included: a
// restriction that cannot be read must not read as none).
absl::StatusOr<Introspection> ParseIntrospection(const nlohmann::json& body);

// Aevatar's HTTP client for NyxID. Every call carries the caller's own
// credential (`bearer`), so NyxID decides what that caller may see and do.
// Every exchange has a deadline. Thread-safe; holds no credential itself
// except the registered-client secret used for introspection.
class NyxidClient {
 public:
  // `tls`: what an https NyxID URL is verified against and the client
  // certificate shown to it (mutual TLS).
  NyxidClient(std::string base_url, std::string introspection_secret,
              std::chrono::milliseconds read_timeout = std::chrono::seconds(15),
              http::ClientTls tls = {});

  const std::string& base_url() const { return base_url_; }

  NyxidReply GetMe(const std::string& bearer) const;
  NyxidReply GetKeys(const std::string& bearer) const;
  // GET /api/v1/keys with If-None-Match on `facts_digest` (its ETag): 304
  // and no body while the caller's /me and /keys still hash to it.
  NyxidReply RevalidateKeys(const std::string& bearer, const std::string& facts_digest) const;
  NyxidReply PutUserService(const std::string& bearer, const std::string& id,
                            const nlohmann::json& patch) const;
  NyxidReply PostUserService(const std::string& bearer, const nlohmann::json& body) const;
  // POST /api/v1/tokens/introspect with this service's registered secret.
  NyxidReply Introspect(const std::string& token) const;
  // The published signing keys (for verifying access and delegation tokens).
  absl::StatusOr<std::string> FetchJwks() const;

  // One exchange through the exact-route proxy:
  //   METHOD /api/v1/proxy/{slug}/{path}?_nyxid_via={route_id}
  // with `bearer` as Authorization. `timeout` bounds the whole exchange.
  NyxidReply Proxy(const std::string& bearer, const std::string& method, const std::string& slug,
                   const std::string& path, const std::string& route_id, const std::string& body,
                   const http::Headers& extra_headers, std::chrono::milliseconds timeout,
                   size_t max_response_bytes = kDefaultMaxResponseBytes) const;

  // The Agent Key lifecycle (human access tokens only, NyxID enforces it):
  // POST /api/v1/agent-keys {label, allowed_services}, GET /api/v1/agent-keys,
  // DELETE /api/v1/agent-keys/{id}. A created key's secret is in the reply
  // body once: never log the reply.
  NyxidReply CreateAgentKey(const std::string& bearer, const std::string& label,
                            const std::vector<std::string>& allowed_services) const;
  NyxidReply ListAgentKeys(const std::string& bearer) const;
  NyxidReply RevokeAgentKey(const std::string& bearer, const std::string& id) const;

  // POST /api/v1/ssh/{service}/exec {principal, command, stdin}: one call of
  // an SSH service's route, relayed by its node (the prompt is in `body`:
  // never log it). `timeout` bounds the whole exchange.
  NyxidReply SshExec(const std::string& bearer, const std::string& service,
                     const nlohmann::json& body, std::chrono::milliseconds timeout) const;

  // POST /api/v1/auth/login {username, password}: a human's password login
  // (the /ui page's), made for the client at `client_address`: with this
  // service's registered secret, NyxID counts the attempt under that address
  // (X-Forwarded-For) rather than aevatar's. The reply holds an access token:
  // never log it.
  NyxidReply Login(const std::string& username, const std::string& password,
                   const std::string& client_address = "") const;

  static constexpr size_t kDefaultMaxResponseBytes = 64 << 20;
  // The node bounds stdout and stderr to 1 MiB each; JSON escaping may
  // double them.
  static constexpr size_t kMaxSshReplyBytes = 5 << 20;

 private:
  NyxidReply Exchange(const std::string& method, const std::string& path, const std::string& bearer,
                      const std::string& body, const http::Headers& extra_headers,
                      std::chrono::milliseconds timeout,
                      size_t max_response_bytes = kDefaultMaxResponseBytes) const;

  std::string base_url_;
  std::string introspection_secret_;
  std::chrono::milliseconds read_timeout_;
  http::ClientTls tls_;
  // Kept-alive connections to NyxID, shared by every exchange (thread-safe).
  std::shared_ptr<http::ConnectionPool> pool_ = std::make_shared<http::ConnectionPool>();
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CLIENTS_NYXID_CLIENT_H_
