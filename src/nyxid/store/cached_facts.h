#ifndef AEVATAR_NYXID_STORE_CACHED_FACTS_H_
#define AEVATAR_NYXID_STORE_CACHED_FACTS_H_

// The proxy's per-request reads of the store (the caller's account,
// memberships and Agent Key, the route and its catalog service), kept per
// facts generation (generation_cache.h): a request reads the generation
// once, and every other read of an unchanged store is served from memory.
// Each request still reads the generation itself, so any change made by
// any process or replica is seen by the next request, never a stale row.
// Only what was found is kept: a lookup that fails is asked again. Secrets
// are not kept: users come without their password hash, and a catalog
// service holding a model provider's key is read for every request.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nyxid/store/facts_reads.h"
#include "nyxid/store/generation_cache.h"

namespace aevatar::nyxid {

class CachedFacts {
 public:
  // `store` outlives this.
  explicit CachedFacts(FactsReads* store) : store_(store) {}

  // The reads as of `generation`, which the caller read from the store
  // before any read made through the view. The view lives no longer than
  // this.
  std::unique_ptr<FactsReads> At(int64_t generation);

 private:
  class View;

  FactsReads* const store_;
  GenerationCache<User> users_;
  GenerationCache<std::vector<Membership>> memberships_;
  GenerationCache<AgentKeyRecord> agent_keys_;
  GenerationCache<CatalogService> catalog_;
  GenerationCache<UserService> routes_;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_CACHED_FACTS_H_
