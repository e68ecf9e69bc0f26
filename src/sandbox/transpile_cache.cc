#include "sandbox/transpile_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/sha256_stream.h"

namespace aevatar::sandbox {

namespace {

// What an entry costs beyond its bytes (list node, map slot, control block).
constexpr size_t kEntryOverheadBytes = 256;

size_t EntryBytes(const std::string& key, const TranspiledProgram& program) {
  return key.size() + program.javascript.size() + program.diagnostics.size() + kEntryOverheadBytes;
}

}  // namespace

std::string TranspileCacheKey(std::string_view transpiler_identity, std::string_view source) {
  base::Sha256Stream digest;
  digest.Update(absl::StrCat(transpiler_identity.size(), ":"));
  digest.Update(transpiler_identity);
  digest.Update(absl::StrCat(source.size(), ":"));
  digest.Update(source);
  return digest.FinalHex();
}

TranspileCache::TranspileCache(size_t max_bytes) : max_bytes_(max_bytes) {}

std::shared_ptr<const TranspiledProgram> TranspileCache::Find(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->program;
}

void TranspileCache::Insert(const std::string& key,
                            std::shared_ptr<const TranspiledProgram> program) {
  if (program == nullptr) return;
  const size_t bytes = EntryBytes(key, *program);
  if (bytes > max_bytes_ / 4) return;
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front({key, std::move(program), bytes});
  index_[key] = lru_.begin();
  bytes_ += bytes;
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    const Entry& oldest = lru_.back();
    bytes_ -= oldest.bytes;
    index_.erase(oldest.key);
    lru_.pop_back();
  }
}

TranspileCache::Stats TranspileCache::stats() const {
  absl::MutexLock lock(&mu_);
  return {hits_, misses_, index_.size(), bytes_};
}

}  // namespace aevatar::sandbox
