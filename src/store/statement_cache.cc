#include "store/statement_cache.h"

#include <sqlite3.h>

#include <utility>

namespace aevatar::store::internal {

std::optional<StatementCache::Entry> StatementCache::Take(std::string_view sql) {
  absl::MutexLock lock(&mu_);
  auto it = idle_.find(std::string(sql));
  if (it == idle_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  idle_.erase(it);
  return entry;
}

void StatementCache::Give(Entry entry) {
  // The return value repeats the last step's error, already reported then.
  sqlite3_reset(entry.stmt);
  sqlite3_clear_bindings(entry.stmt);
  const char* sql = sqlite3_sql(entry.stmt);
  {
    absl::MutexLock lock(&mu_);
    if (open_ && sql != nullptr && idle_.size() < kMaxIdle && !idle_.contains(sql)) {
      idle_.emplace(sql, std::move(entry));
      return;
    }
  }
  sqlite3_finalize(entry.stmt);
}

void StatementCache::FinalizeAll() {
  absl::MutexLock lock(&mu_);
  for (auto& [sql, entry] : idle_) sqlite3_finalize(entry.stmt);
  idle_.clear();
  open_ = false;
}

}  // namespace aevatar::store::internal
