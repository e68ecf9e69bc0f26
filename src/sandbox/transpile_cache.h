#ifndef AEVATAR_SANDBOX_TRANSPILE_CACHE_H_
#define AEVATAR_SANDBOX_TRANSPILE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::sandbox {

// What the TypeScript compiler made of one source: JavaScript (and any
// warnings), or its refusal (a syntax error) with the message it printed.
struct TranspiledProgram {
  bool compiled = false;    // false: `diagnostics` is the compiler's error message
  int exit_code = 0;        // the compiler's exit code when !compiled
  std::string javascript;   // when compiled
  std::string diagnostics;  // the compiler's stderr (warnings when compiled)
};

// The cache key of `source` compiled by `transpiler_identity` (its version
// and flags): SHA-256 over both, length-prefixed so that no two different
// pairs share a key. 64 hex digits.
std::string TranspileCacheKey(std::string_view transpiler_identity, std::string_view source);

// A content-addressed, size-bounded, in-memory cache of compiled programs,
// least recently used first out. Only results that depend on the source and
// the transpiler alone belong here (a timeout or a cancelled compile does
// not). Thread-safe.
class TranspileCache {
 public:
  // Holds at most `max_bytes` of keys and programs (plus a fixed overhead
  // per entry); a single program larger than a quarter of that is never kept.
  explicit TranspileCache(size_t max_bytes);
  TranspileCache(const TranspileCache&) = delete;
  TranspileCache& operator=(const TranspileCache&) = delete;

  // Returns the program stored under `key` (and marks it recently used), or
  // null. The returned program stays valid after it is evicted.
  std::shared_ptr<const TranspiledProgram> Find(const std::string& key);
  // Stores `program` under `key` (replacing an entry with that key), then
  // evicts least recently used entries until the cache fits its bound.
  void Insert(const std::string& key, std::shared_ptr<const TranspiledProgram> program);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    size_t entries = 0;
    size_t bytes = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const TranspiledProgram> program;
    size_t bytes = 0;
  };
  using Lru = std::list<Entry>;  // front: most recently used

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_TRANSPILE_CACHE_H_
