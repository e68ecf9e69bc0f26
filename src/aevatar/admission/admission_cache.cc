#include "aevatar/admission/admission_cache.h"

#include <algorithm>

#include "base/crypto.h"

namespace aevatar::orchestrator {

std::optional<AdmissionCache::Admission> AdmissionCache::Find(const std::string& credential) {
  const std::string key = base::Sha256Hex(credential);
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  if (it->second.until <= Clock::now()) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.admission;
}

void AdmissionCache::Remember(const std::string& credential, const Admission& admission) {
  if (admission.facts_digest.empty()) return;
  const std::string key = base::Sha256Hex(credential);
  const Clock::time_point now = Clock::now();
  absl::MutexLock lock(&mu_);
  if (entries_.size() >= options_.capacity && !entries_.contains(key)) {
    // Full: drop what has expired, else the entry closest to expiry (a
    // dropped entry costs one re-admission, never a wrong answer).
    std::erase_if(entries_, [&](const auto& entry) { return entry.second.until <= now; });
    if (entries_.size() >= options_.capacity) {
      entries_.erase(std::min_element(
          entries_.begin(), entries_.end(),
          [](const auto& a, const auto& b) { return a.second.until < b.second.until; }));
    }
  }
  entries_[key] = Entry{admission, now + options_.ttl};
}

void AdmissionCache::Forget(const std::string& credential, const std::string& facts_digest) {
  const std::string key = base::Sha256Hex(credential);
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.admission.facts_digest == facts_digest) entries_.erase(it);
}

}  // namespace aevatar::orchestrator
