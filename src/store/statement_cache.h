#ifndef AEVATAR_STORE_STATEMENT_CACHE_H_
#define AEVATAR_STORE_STATEMENT_CACHE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

struct sqlite3_stmt;

// Internal to src/store: one connection's compiled statements kept between
// uses. Compiling is most of the cost of a short query (a primary-key lookup
// spends ~3x longer in sqlite3_prepare than in sqlite3_step), and the stores
// run the same few dozen statement texts over and over.
namespace aevatar::store::internal {

class StatementCache {
 public:
  // Distinct statement texts kept at most; stores that build SQL at run
  // time (IN lists of varying length) cannot grow the cache past this.
  static constexpr size_t kMaxIdle = 256;

  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    std::string label;  // shortened SQL text, for error messages
  };

  StatementCache() = default;
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;
  ~StatementCache() { FinalizeAll(); }

  // The idle statement compiled from `sql`, if one is kept; it is the
  // caller's until it is given back.
  std::optional<Entry> Take(std::string_view sql);

  // Resets `entry` (ending any read it had open) and clears its bindings,
  // then keeps it for the next Take of its text, or finalizes it when a
  // statement of that text is already kept or the cache is full.
  void Give(Entry entry);

  // Finalizes every kept statement and keeps none from now on (the
  // connection is closing; a statement still out is finalized when given
  // back, which lets SQLite finish the deferred close).
  void FinalizeAll();

 private:
  absl::Mutex mu_;
  std::unordered_map<std::string, Entry> idle_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace aevatar::store::internal

#endif  // AEVATAR_STORE_STATEMENT_CACHE_H_
