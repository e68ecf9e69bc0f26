#include "aevatar/runtime/definition_cache.h"

namespace aevatar::orchestrator {

std::shared_ptr<const WorkflowDefinition> DefinitionCache::Find(const std::string& digest) const {
  absl::MutexLock lock(&mu_);
  auto found = by_digest_.find(digest);
  return found == by_digest_.end() ? nullptr : found->second;
}

void DefinitionCache::Put(std::shared_ptr<const WorkflowDefinition> definition) {
  if (capacity_ == 0 || definition == nullptr || definition->digest.empty()) return;
  absl::MutexLock lock(&mu_);
  const std::string digest = definition->digest;
  if (!by_digest_.emplace(digest, std::move(definition)).second) return;
  oldest_first_.push_back(digest);
  while (oldest_first_.size() > capacity_) {
    by_digest_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
}

}  // namespace aevatar::orchestrator
