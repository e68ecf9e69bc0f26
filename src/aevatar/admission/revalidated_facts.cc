#include "aevatar/admission/revalidated_facts.h"

#include "base/crypto.h"

namespace aevatar::orchestrator {

absl::StatusOr<NyxidFacts> RevalidatedFacts::Read(const std::string& credential) {
  const std::string key = base::Sha256Hex(credential);
  if (std::optional<NyxidFacts> kept = Kept(key)) {
    const NyxidReply reply = nyxid_->RevalidateKeys(credential, kept->facts_digest);
    // The digest NyxID confirms must be the one asked about: a 304 for any
    // other (or none) is not an answer about these facts.
    if (reply.status == 304 &&
        reply.headers.Get(kFactsDigestHeader).value_or("") == kept->facts_digest) {
      return *std::move(kept);
    }
  }
  absl::StatusOr<NyxidFacts> facts = ReadNyxidFacts(*nyxid_, credential);
  Keep(key, facts);
  return facts;
}

std::optional<NyxidFacts> RevalidatedFacts::Kept(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = kept_.find(key);
  if (it == kept_.end()) return std::nullopt;
  return it->second;
}

void RevalidatedFacts::Keep(const std::string& key, const absl::StatusOr<NyxidFacts>& facts) {
  absl::MutexLock lock(&mu_);
  // Without a confirmed digest there is nothing to revalidate against.
  if (!facts.ok() || facts->facts_digest.empty()) {
    kept_.erase(key);
    return;
  }
  if (kept_.size() >= capacity_ && !kept_.contains(key)) kept_.clear();
  kept_[key] = *facts;
}

}  // namespace aevatar::orchestrator
