#include "chrono/codex/codex_attach.h"

#include <algorithm>
#include <vector>

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::chrono {

CodexAttachRegistry::CodexAttachRegistry(NowMs now, int64_t retention_ms)
    : now_(std::move(now)), retention_ms_(retention_ms) {}

size_t CodexAttachRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

int CodexAttachRegistry::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

absl::StatusOr<CodexRunResult> CodexAttachRegistry::RunOnce(const std::string& owner,
                                                            const std::string& key,
                                                            const std::string& fingerprint,
                                                            const Run& run) {
  // Length-prefixed, so that no (owner, key) pair can collide with another.
  const std::string id = base::Sha256Hex(std::to_string(owner.size()) + ":" + owner + key);
  std::shared_ptr<Entry> entry;
  {
    absl::MutexLock lock(&mu_);
    SweepLocked(now_());
    auto found = entries_.find(id);
    if (found != entries_.end()) {
      entry = found->second;
      if (entry->fingerprint != fingerprint) {
        return base::ApiError(absl::StatusCode::kAlreadyExists, "IDEMPOTENCY_KEY_REUSE",
                              "this Idempotency-Key was used with a different request");
      }
      ++waiting_;
      mu_.Await(absl::Condition(&entry->done));
      --waiting_;
      return entry->result;
    }
    entry = std::make_shared<Entry>();
    entry->fingerprint = fingerprint;
    entries_[id] = entry;
  }
  absl::StatusOr<CodexRunResult> result = run();
  absl::MutexLock lock(&mu_);
  entry->done = true;
  entry->result = result;
  entry->finished_ms = now_();
  // Only a run that reached Codex is kept; a failed attempt must not stick.
  if (!result.ok()) entries_.erase(id);
  return result;
}

void CodexAttachRegistry::SweepLocked(int64_t now) {
  std::vector<std::pair<int64_t, std::string>> finished;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& entry = *it->second;
    if (entry.done && now - entry.finished_ms >= retention_ms_) {
      it = entries_.erase(it);
      continue;
    }
    if (entry.done) finished.emplace_back(entry.finished_ms, it->first);
    ++it;
  }
  if (finished.size() <= kMaxFinishedEntries) return;
  std::sort(finished.begin(), finished.end());
  for (size_t i = 0; i < finished.size() - kMaxFinishedEntries; ++i) {
    entries_.erase(finished[i].second);
  }
}

}  // namespace aevatar::chrono
