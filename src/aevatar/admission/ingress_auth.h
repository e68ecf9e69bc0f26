#ifndef AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_
#define AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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
  // An Agent Key's allowed_services as NyxID's introspection reports them
  // (route ids or slugs); empty for an unrestricted key and every token.
  std::vector<std::string> allowed_services = {};

  // An Agent Key its owner restricted to some services: an execution
  // credential at aevatar (agent_key_scope.h), never an inventory one.
  bool RestrictedAgentKey() const {
    return kind == CredentialKind::kAgentKey && !allowed_services.empty();
  }
};

// Authenticates aevatar's callers (fail closed):
//  - a NyxID human access token (EdDSA JWS, token_kind "access", aud "nyxid",
//    scope account:read), verified against NyxID's JWKS -> HumanBearer;
//  - an Agent Key ("nyxid_ag_…") -> AgentKey;
//  - a NyxID proxy delegation token (token_kind "delegation", aud
//    `audience`, scope account:read), in X-NyxID-Delegation-Token or as the
//    bearer -> ProxyDelegation.
// Every credential is also introspected at NyxID (an Agent Key's
// allowed_services are read from the answer), the answer cached for
// `introspection_cache` (kIntrospectionCache): a revoked Agent Key, or a
// token revoked by its user's logout or password change, stops working here
// within that bound (401 AGENT_KEY_INACTIVE / TOKEN_REVOKED).
// Errors: 401 CREDENTIAL_MISSING / TOKEN_* / AGENT_KEY_INACTIVE, 403
// TOKEN_SCOPE_MISSING, 503 NYXID_UNAVAILABLE, 502 NYXID_RESPONSE_INVALID (an
// introspection answer that breaks NyxID's contract). Thread-safe.
// How long NyxID's answer about a credential is trusted here: the bound on a
// revocation reaching aevatar.
inline constexpr std::chrono::seconds kIntrospectionCache{5};

class IngressAuth {
 public:
  IngressAuth(const NyxidClient* nyxid, base::KeyLookup keys, std::string audience,
              std::chrono::seconds introspection_cache = kIntrospectionCache);

  absl::StatusOr<Caller> Authenticate(const http::Request& request);

 private:
  absl::StatusOr<Caller> VerifyJwt(const std::string& token, bool from_delegation_header);
  absl::StatusOr<Caller> IntrospectAgentKey(const std::string& key);
  // NyxID's answer for `credential` when it is active, of `kind`
  // ("AgentKey", "AccessToken", "ProxyDelegation") and names a subject; 401
  // `inactive_code` otherwise.
  absl::StatusOr<Introspection> Introspected(const std::string& credential, const std::string& kind,
                                             const std::string& inactive_code);

  const NyxidClient* nyxid_;
  base::KeyLookup keys_;
  std::string audience_;
  std::chrono::seconds introspection_cache_;
  absl::Mutex mu_;
  struct CachedKey {
    Introspection answer;
    std::chrono::steady_clock::time_point until;
  };
  // credential SHA-256 -> NyxID's answer
  std::map<std::string, CachedKey> introspected_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_INGRESS_AUTH_H_
