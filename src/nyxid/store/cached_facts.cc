#include "nyxid/store/cached_facts.h"

#include <utility>

namespace aevatar::nyxid {
namespace {

// `cache`'s value for `key` at `generation`, or else `read()`'s, kept when
// found and `keep` allows.
template <typename Value, typename Read, typename Keep>
absl::StatusOr<Value> ThroughCache(GenerationCache<Value>& cache, const std::string& key,
                                   int64_t generation, Read read, Keep keep) {
  if (std::optional<Value> kept = cache.Find(key, generation)) return *std::move(kept);
  absl::StatusOr<Value> value = read();
  if (value.ok() && keep(*value)) cache.Remember(key, generation, *value);
  return value;
}
template <typename Value, typename Read>
absl::StatusOr<Value> ThroughCache(GenerationCache<Value>& cache, const std::string& key,
                                   int64_t generation, Read read) {
  return ThroughCache(cache, key, generation, read, [](const Value&) { return true; });
}

}  // namespace

class CachedFacts::View final : public FactsReads {
 public:
  View(CachedFacts* facts, int64_t generation) : facts_(facts), generation_(generation) {}

  absl::StatusOr<User> FindUserById(const std::string& id) override {
    return ThroughCache(facts_->users_, id, generation_, [&]() -> absl::StatusOr<User> {
      absl::StatusOr<User> user = facts_->store_->FindUserById(id);
      if (user.ok()) user->password_hash.clear();  // never needed past the login
      return user;
    });
  }
  absl::StatusOr<std::vector<Membership>> MembershipsOfUser(const std::string& user_id) override {
    return ThroughCache(facts_->memberships_, user_id, generation_,
                        [&] { return facts_->store_->MembershipsOfUser(user_id); });
  }
  absl::StatusOr<AgentKeyRecord> FindAgentKeyByHash(const std::string& key_hash_hex) override {
    return ThroughCache(facts_->agent_keys_, key_hash_hex, generation_,
                        [&] { return facts_->store_->FindAgentKeyByHash(key_hash_hex); });
  }
  absl::StatusOr<CatalogService> FindCatalogService(const std::string& id) override {
    // A model route's provider key, opened from the store, lives no longer
    // than the request that sends it.
    return ThroughCache(
        facts_->catalog_, id, generation_, [&] { return facts_->store_->FindCatalogService(id); },
        [](const CatalogService& service) { return service.provider_api_key.empty(); });
  }
  absl::StatusOr<UserService> FindUserService(const std::string& id) override {
    return ThroughCache(facts_->routes_, id, generation_,
                        [&] { return facts_->store_->FindUserService(id); });
  }

 private:
  CachedFacts* const facts_;
  const int64_t generation_;
};

std::unique_ptr<FactsReads> CachedFacts::At(int64_t generation) {
  return std::make_unique<View>(this, generation);
}

}  // namespace aevatar::nyxid
