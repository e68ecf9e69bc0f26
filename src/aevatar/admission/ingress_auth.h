#ifndef AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_
#define AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/clients/nyxid_client.h"
#include "base/jws.h"
#include "http/message.h"

namespace aevatar::orchestrator {

// The kind of credential a caller presented. It never changes on the way: an
// Agent Key is forwarded as an Agent Key, never relabelled.
enum class CredentialKind { kHumanBearer, kAgentKey, kProxyDelegation };
std::string_view CredentialKindName(CredentialKind kind);

// A verified caller, valid for one request only. `credential` is the raw
// bearer, kept to call NyxID on the caller's behalf: it is never logged,
// stored, or put in a plan, state or read model, and neither is
// `write_authority`.
struct Caller {
  CredentialKind kind = CredentialKind::kHumanBearer;
  std::string user_id;
  std::string credential;
  // Only a verified direct human access token may change NyxID routes.
  bool write_authority = false;
};

// Authenticates aevatar's callers (fail closed):
//  - a NyxID human access token (EdDSA JWS, token_kind "access", aud "nyxid",
//    scope account:read), verified against NyxID's JWKS -> HumanBearer;
//  - an Agent Key ("nyxid_ag_…"), introspected at NyxID and cached for
//    `agent_key_cache` -> AgentKey;
//  - a NyxID proxy delegation token (token_kind "delegation", aud
//    `audience`, scope account:read), in X-NyxID-Delegation-Token or as the
//    bearer -> ProxyDelegation.
// Errors: 401 CREDENTIAL_MISSING / TOKEN_* / AGENT_KEY_INACTIVE, 403
// TOKEN_SCOPE_MISSING, 503 NYXID_UNAVAILABLE, 502 NYXID_RESPONSE_INVALID (an
// introspection answer that breaks NyxID's contract). Thread-safe.
class IngressAuth {
 public:
  IngressAuth(const NyxidClient* nyxid, base::KeyLookup keys, std::string audience,
              std::chrono::seconds agent_key_cache = std::chrono::seconds(30));

  absl::StatusOr<Caller> Authenticate(const http::Request& request);

 private:
  absl::StatusOr<Caller> VerifyJwt(const std::string& token, bool from_delegation_header);
  absl::StatusOr<Caller> IntrospectAgentKey(const std::string& key);

  const NyxidClient* nyxid_;
  base::KeyLookup keys_;
  std::string audience_;
  std::chrono::seconds agent_key_cache_;
  absl::Mutex mu_;
  struct CachedKey {
    std::string user_id;
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, CachedKey> agent_keys_ ABSL_GUARDED_BY(mu_);  // key SHA-256 -> subject
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_
