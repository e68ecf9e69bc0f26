#ifndef AEVATAR_NYXID_ACCOUNTS_PRINCIPAL_H_
#define AEVATAR_NYXID_ACCOUNTS_PRINCIPAL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nyxid/model.h"

namespace aevatar::nyxid {

// The kinds of credential a caller can present. A credential keeps its kind
// end to end: the proxy forwards exactly what it received (an Agent Key stays
// an Agent Key) and mints delegation tokens only as a separate header.
enum class CredentialKind {
  kAccess,      // human access token (EdDSA JWS, token_kind "access", one hour)
  kAgentKey,    // opaque "nyxid_ag_…" key, hashed at rest
  kDelegation,  // proxy-minted EdDSA JWS, token_kind "delegation", five minutes
};

// "AccessToken", "AgentKey", "ProxyDelegation": the names the API reports.
std::string_view CredentialKindName(CredentialKind kind);

// Scopes a human access token carries.
inline constexpr char kAccountReadScope[] = "account:read";
// Scope a delegation token needs to call the proxy.
inline constexpr char kProxyScope[] = "proxy:*";

// Who is calling and with what. `credential` is the raw bearer, kept only to
// forward it upstream: it must never be logged or echoed.
struct Principal {
  User user;
  CredentialKind kind = CredentialKind::kAccess;
  std::vector<std::string> scopes;          // sorted; empty for Agent Keys
  std::optional<AgentKeyRecord> agent_key;  // set for kAgentKey
  std::string credential;
  // kDelegation: the token's aud, the catalog slug it was minted for.
  std::string audience;
  std::vector<Membership> memberships;

  bool HasScope(std::string_view scope) const;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ACCOUNTS_PRINCIPAL_H_
