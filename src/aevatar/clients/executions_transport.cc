#include "aevatar/clients/executions_transport.h"

#include <algorithm>
#include <utility>

namespace aevatar::orchestrator {
namespace {

inline constexpr size_t kMaxOperationIdSuffix = 64;
// The executor's documented limit on Idempotency-Key.
inline constexpr size_t kMaxIdempotencyKeyBytes = 255;

// A reply for input rejected before any exchange. The body carries a code
// only: never the rejected value, which may be a key or provider metadata.
NyxidReply LocalReject(const std::string& code) {
  NyxidReply reply;
  reply.status = kLocalRejectStatus;
  reply.body = nlohmann::json{{"code", code}};
  reply.raw_body = reply.body.dump();
  return reply;
}

// Printable ASCII without spaces: nothing that could split or fold a header.
bool IsValidIdempotencyKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

bool IsValidProviderOperationId(const std::string& id) {
  if (id.size() < 4 || id.size() > 3 + kMaxOperationIdSuffix || id.compare(0, 3, "op_") != 0) {
    return false;
  }
  return std::all_of(id.begin() + 3, id.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

ProxyExecutionsTransport::ProxyExecutionsTransport(const NyxidClient* nyxid, std::string credential,
                                                   std::string slug, std::string user_service_id,
                                                   std::chrono::milliseconds bound)
    : nyxid_(nyxid),
      credential_(std::move(credential)),
      slug_(std::move(slug)),
      user_service_id_(std::move(user_service_id)),
      bound_(std::clamp<std::chrono::milliseconds>(bound, std::chrono::milliseconds(1),
                                                   kExchangeBound)) {}

NyxidReply ProxyExecutionsTransport::Exchange(const std::string& method, const std::string& path,
                                              const std::string& body,
                                              const http::Headers& headers) const {
  http::Headers extra = headers;
  extra.Set("Accept", "application/json");
  return nyxid_->Proxy(credential_, method, slug_, path, user_service_id_, body, extra, bound_);
}

NyxidReply ProxyExecutionsTransport::Submit(const std::string& idempotency_key,
                                            const nlohmann::json& body) {
  if (!IsValidIdempotencyKey(idempotency_key)) return LocalReject("IDEMPOTENCY_KEY_INVALID");
  http::Headers headers;
  headers.Set("Idempotency-Key", idempotency_key);
  return Exchange("POST", "executions", body.dump(), headers);
}

NyxidReply ProxyExecutionsTransport::Status(const std::string& operation_id,
                                            const std::string& if_none_match) {
  if (!IsValidProviderOperationId(operation_id)) return LocalReject(kInvalidOperationIdCode);
  http::Headers headers;
  // An ETag is a quoted token; anything with a line break is not one and is
  // dropped rather than forwarded into a header.
  if (!if_none_match.empty() && if_none_match.find_first_of("\r\n") == std::string::npos) {
    headers.Set("If-None-Match", if_none_match);
  }
  return Exchange("GET", "executions/" + operation_id, "", headers);
}

NyxidReply ProxyExecutionsTransport::Result(const std::string& operation_id) {
  if (!IsValidProviderOperationId(operation_id)) return LocalReject(kInvalidOperationIdCode);
  return Exchange("GET", "executions/" + operation_id + "/result", "", {});
}

NyxidReply ProxyExecutionsTransport::Cancel(const std::string& operation_id,
                                            int64_t deadline_unix_ms) {
  if (!IsValidProviderOperationId(operation_id)) return LocalReject(kInvalidOperationIdCode);
  const nlohmann::json body{{"deadline_unix_ms", deadline_unix_ms}};
  return Exchange("POST", "executions/" + operation_id + "/cancel", body.dump(), {});
}

}  // namespace aevatar::orchestrator
