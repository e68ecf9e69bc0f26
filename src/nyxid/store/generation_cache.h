#ifndef AEVATAR_NYXID_STORE_GENERATION_CACHE_H_
#define AEVATAR_NYXID_STORE_GENERATION_CACHE_H_

// Values derived from the store's facts, remembered per facts generation
// (NyxidStore::FactsGeneration). A value is only ever served at the
// generation it was remembered under, and that generation was read before
// the facts it was derived from, so a change that commits in between moves
// the generation and the entry is never served: a revoked route or key, a
// dropped membership or a logout always reaches the next check.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::nyxid {

// Thread-safe.
template <typename Value>
class GenerationCache {
 public:
  // At most `capacity` keys; past it the cache starts afresh.
  explicit GenerationCache(size_t capacity = 4096) : capacity_(capacity) {}

  // The value remembered for `key` at exactly `generation`.
  std::optional<Value> Find(const std::string& key, int64_t generation) {
    absl::MutexLock lock(&mu_);
    // A generation behind the remembered one is a reader that raced ahead
    // of another, or a store restored from a backup (whose next write jumps
    // past every number it had, NyxidStore::FactsGeneration): forget what
    // was remembered either way.
    if (generation < generation_) values_.clear();
    if (generation != generation_) return std::nullopt;
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

  // Remembers `value`, derived from facts read after reading `generation`.
  // Entries of another generation are forgotten: they can never be served
  // again.
  void Remember(const std::string& key, int64_t generation, Value value) {
    absl::MutexLock lock(&mu_);
    // An older generation's value (a slow reader) is not worth keeping, and
    // it must not wipe the entries of the newer one.
    if (generation < generation_) return;
    if (generation != generation_ || values_.size() >= capacity_) {
      values_.clear();
      generation_ = generation;
    }
    values_.insert_or_assign(key, std::move(value));
  }

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = -1;
  std::unordered_map<std::string, Value> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_GENERATION_CACHE_H_
