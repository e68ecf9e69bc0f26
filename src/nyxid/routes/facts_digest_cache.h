#ifndef AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_
#define AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_

// Callers' facts digests (caller_facts.h), remembered per facts generation
// (store/generation_cache.h), so a proxied request that carries a reused
// admission's digest is checked without reading and rendering /me and /keys
// again.
#include <string>

#include "nyxid/accounts/principal.h"
#include "nyxid/store/generation_cache.h"

namespace aevatar::nyxid {

// What a caller's /me and /keys depend on besides the store: the account,
// the credential's kind, scopes and audience and the Agent Key. Everything
// else they show (the user's row, memberships, the key's allowed services)
// is in the store and covered by the generation.
std::string FactsKeyOf(const Principal& caller);

// Digests keyed by FactsKeyOf.
using FactsDigestCache = GenerationCache<std::string>;

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_
