#include "nyxid/tokens/recent_delegations.h"

#include <utility>

namespace aevatar::nyxid {

bool RecentDelegations::Young(const Entry& entry, int64_t now_unix) {
  return entry.minted_unix <= now_unix && now_unix - entry.minted_unix <= kReuseSecs;
}

std::optional<std::string> RecentDelegations::Find(const std::string& key, int64_t now_unix) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !Young(it->second, now_unix)) return std::nullopt;
  return it->second.token;
}

void RecentDelegations::Remember(std::string key, std::string token, int64_t minted_unix) {
  absl::MutexLock lock(&mu_);
  if (entries_.size() >= kMaxEntries && !entries_.contains(key)) {
    std::erase_if(entries_,
                  [minted_unix](const auto& entry) { return !Young(entry.second, minted_unix); });
    if (entries_.size() >= kMaxEntries) entries_.clear();
  }
  entries_.insert_or_assign(std::move(key), Entry{std::move(token), minted_unix});
}

}  // namespace aevatar::nyxid
