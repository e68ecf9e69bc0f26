#include "nyxid/accounts/principal.h"

#include <algorithm>

namespace aevatar::nyxid {

std::string_view CredentialKindName(CredentialKind kind) {
  switch (kind) {
    case CredentialKind::kAccess:
      return "AccessToken";
    case CredentialKind::kAgentKey:
      return "AgentKey";
    case CredentialKind::kDelegation:
      return "ProxyDelegation";
  }
  return "AccessToken";
}

bool Principal::HasScope(std::string_view scope) const {
  return std::binary_search(scopes.begin(), scopes.end(), std::string(scope));
}

}  // namespace aevatar::nyxid
