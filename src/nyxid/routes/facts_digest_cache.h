#ifndef AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_
#define AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_

// Callers' facts digests (caller_facts.h), remembered per facts generation
// (NyxidStore::FactsGeneration), so a proxied request that carries a reused
// admission's digest is checked without reading and rendering /me and /keys
// again. A digest is only ever served at the generation it was remembered
// under, and that generation was read before the facts it digests, so a
// change that commits in between moves the generation and the entry is
// never served: a revoked route or key, a dropped membership or a logout
// always reaches the next check.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nyxid/accounts/principal.h"

namespace aevatar::nyxid {

// What a caller's /me and /keys depend on besides the store: the account,
// the credential's kind, scopes and audience and the Agent Key. Everything
// else they show (the user's row, memberships, the key's allowed services)
// is in the store and covered by the generation.
std::string FactsKeyOf(const Principal& caller);

class FactsDigestCache {
 public:
  // At most `capacity` callers; past it the cache starts afresh.
  explicit FactsDigestCache(size_t capacity = 4096) : capacity_(capacity) {}

  // The digest remembered for `key` at exactly `generation`.
  std::optional<std::string> Find(const std::string& key, int64_t generation);
  // Remembers `digest` of facts read after reading `generation`. Entries of
  // another generation are forgotten: they can never be served again.
  void Remember(const std::string& key, int64_t generation, std::string digest);

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = -1;
  std::unordered_map<std::string, std::string> digests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ROUTES_FACTS_DIGEST_CACHE_H_
