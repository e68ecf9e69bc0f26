#include "nyxid/routes/facts_digest_cache.h"

#include "absl/strings/str_cat.h"

namespace aevatar::nyxid {

std::string FactsKeyOf(const Principal& caller) {
  // '\n' cannot occur in an id, a scope or a slug, so fields never run together.
  return absl::StrCat(caller.user.id, "\n", std::string(CredentialKindName(caller.kind)), "\n",
                      JoinScopes(caller.scopes), "\n", caller.audience, "\n",
                      caller.agent_key ? caller.agent_key->id : std::string());
}

}  // namespace aevatar::nyxid
