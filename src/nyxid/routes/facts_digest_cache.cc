#include "nyxid/routes/facts_digest_cache.h"

#include "absl/strings/str_cat.h"

namespace aevatar::nyxid {

std::string FactsKeyOf(const Principal& caller) {
  // '\n' cannot occur in an id, a scope or a slug, so fields never run together.
  return absl::StrCat(caller.user.id, "\n", std::string(CredentialKindName(caller.kind)), "\n",
                      JoinScopes(caller.scopes), "\n", caller.audience, "\n",
                      caller.agent_key ? caller.agent_key->id : std::string());
}

std::optional<std::string> FactsDigestCache::Find(const std::string& key, int64_t generation) {
  absl::MutexLock lock(&mu_);
  // A generation behind the remembered one is a reader that raced ahead of
  // another, or a store restored from a backup (whose next write jumps past
  // every number it had, NyxidStore::FactsGeneration): forget what was
  // remembered either way.
  if (generation < generation_) digests_.clear();
  if (generation != generation_) return std::nullopt;
  auto it = digests_.find(key);
  if (it == digests_.end()) return std::nullopt;
  return it->second;
}

void FactsDigestCache::Remember(const std::string& key, int64_t generation, std::string digest) {
  absl::MutexLock lock(&mu_);
  // An older generation's digest (a slow reader) is not worth keeping, and
  // it must not wipe the entries of the newer one.
  if (generation < generation_) return;
  if (generation != generation_ || digests_.size() >= capacity_) {
    digests_.clear();
    generation_ = generation;
  }
  digests_[key] = std::move(digest);
}

}  // namespace aevatar::nyxid
