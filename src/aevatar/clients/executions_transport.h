#ifndef AEVATAR_AEVATAR_CLIENTS_EXECUTIONS_TRANSPORT_H_
#define AEVATAR_AEVATAR_CLIENTS_EXECUTIONS_TRANSPORT_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "aevatar/clients/nyxid_client.h"
#include "nlohmann/json.hpp"

// The durable code_execute transport: one bounded exchange with the
// executor's asynchronous /executions API, always through the public NyxID
// exact-route proxy (never the internal base URL, never a URL taken from a
// receipt).
//
// Paths are built only from a validated provider operation id
// (^op_[a-z0-9]{1,64}$) and the already admitted route. Receipt fields such
// as status_url, result_url and cancel_url are provider metadata; nothing in
// this file follows them.
namespace aevatar::orchestrator {

// Every durable exchange (connect, send, receive) ends within this bound, so
// no actor turn can hold an Aevatar-to-NyxID exchange open for edge length.
inline constexpr std::chrono::seconds kExchangeBound{15};

// The local status code of a reply that never left the process because its
// input was rejected (e.g. an invalid provider operation id). It is a
// definitive 4xx, so reconciliation never retries it.
inline constexpr int kLocalRejectStatus = 400;
inline constexpr char kInvalidOperationIdCode[] = "PROVIDER_OPERATION_ID_INVALID";

// Returns true when `id` matches ^op_[a-z0-9]{1,64}$ exactly.
bool IsValidProviderOperationId(const std::string& id);

// One bounded exchange per call with the executor's /executions API.
// A reply with status 0 means the exchange itself failed (refused, timed
// out); any other status is the provider's or proxy's answer, with its
// headers (ETag, Retry-After, Location) unchanged.
// Implementations must be safe to call from one actor turn at a time; they
// never sleep or retry on their own.
class ExecutionsTransport {
 public:
  virtual ~ExecutionsTransport() = default;

  // POST /executions with `Idempotency-Key: idempotency_key`. Repeating it
  // with the same key and body converges on the same operation.
  virtual NyxidReply Submit(const std::string& idempotency_key, const nlohmann::json& body) = 0;
  // GET /executions/{id}; sends If-None-Match when `if_none_match` is non-empty.
  virtual NyxidReply Status(const std::string& operation_id, const std::string& if_none_match) = 0;
  // GET /executions/{id}/result.
  virtual NyxidReply Result(const std::string& operation_id) = 0;
  // POST /executions/{id}/cancel with {"deadline_unix_ms": deadline_unix_ms}:
  // the same absolute deadline on every cancel request for one stop.
  virtual NyxidReply Cancel(const std::string& operation_id, int64_t deadline_unix_ms) = 0;
};

// ExecutionsTransport over NyxidClient::Proxy:
//   METHOD {nyxid}/api/v1/proxy/{slug}/executions[/{id}[/result|/cancel]]?_nyxid_via={id}
// with the caller's credential as the bearer. The credential, slug and exact
// UserService id are bound at construction and never logged.
// An invalid operation id or empty idempotency key answers a local
// kLocalRejectStatus reply without any network exchange.
// Thread-compatible; `nyxid` must outlive this object (NyxidClient is thread-safe).
class ProxyExecutionsTransport : public ExecutionsTransport {
 public:
  // `bound` shortens the per-exchange bound (tests); it is clamped to
  // (0, kExchangeBound], so no caller can lengthen an exchange past 15 s.
  ProxyExecutionsTransport(const NyxidClient* nyxid, std::string credential, std::string slug,
                           std::string user_service_id,
                           std::chrono::milliseconds bound = kExchangeBound);

  NyxidReply Submit(const std::string& idempotency_key, const nlohmann::json& body) override;
  NyxidReply Status(const std::string& operation_id, const std::string& if_none_match) override;
  NyxidReply Result(const std::string& operation_id) override;
  NyxidReply Cancel(const std::string& operation_id, int64_t deadline_unix_ms) override;

  // The bound applied to each exchange (<= kExchangeBound).
  std::chrono::milliseconds bound() const { return bound_; }

 private:
  NyxidReply Exchange(const std::string& method, const std::string& path, const std::string& body,
                      const http::Headers& headers) const;

  const NyxidClient* nyxid_;
  std::string credential_;
  std::string slug_;
  std::string user_service_id_;
  std::chrono::milliseconds bound_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CLIENTS_EXECUTIONS_TRANSPORT_H_
