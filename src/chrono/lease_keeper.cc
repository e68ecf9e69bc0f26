#include "chrono/lease_keeper.h"

#include <utility>

#include "base/log.h"

namespace aevatar::chrono {

using base::LogLevel;

LeaseKeeper::LeaseKeeper(LeaseKeeperOptions options, OperationStore* store, base::UnixMsClock now,
                         RunsInProgress runs)
    : options_(std::move(options)), store_(store), now_(std::move(now)), runs_(std::move(runs)) {}

LeaseKeeper::~LeaseKeeper() { Stop(); }

void LeaseKeeper::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LeaseKeeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::Loop() {
  for (;;) {
    Tick();
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick)) return;
  }
}

void LeaseKeeper::HandleRenewals(const std::vector<std::string>& ids,
                                 const std::vector<LeaseRenewal>& renewed) {
  std::set<std::string> kept;
  std::vector<std::string> cancelled;
  for (const LeaseRenewal& renewal : renewed) {
    kept.insert(renewal.id);
    if (renewal.cancel_requested) cancelled.push_back(renewal.id);
  }
  // A run still in progress after the renewal was running in the store
  // during it (a run records its outcome only after it leaves the list), so
  // its absence from `renewed` means it was settled elsewhere while this
  // runner could not renew. A run that finished meanwhile is not lost.
  const std::vector<std::string> still = runs_.ids();
  const std::set<std::string> in_progress(still.begin(), still.end());
  for (const std::string& id : ids) {
    if (kept.count(id) == 0 && in_progress.count(id) > 0) {
      base::Log(LogLevel::kWarn, "operation.lease_lost", id);
      runs_.kill(id);
    }
  }
  for (const std::string& id : cancelled) {
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      first = relayed_.insert(id).second;
    }
    // Killed on every tick until the run ends (a kill is idempotent); logged once.
    if (first) base::Log(LogLevel::kInfo, "operation.cancel_relayed", id);
    runs_.kill(id);
  }
  absl::MutexLock lock(&mu_);
  std::erase_if(relayed_, [&](const std::string& id) { return kept.count(id) == 0; });
}

void LeaseKeeper::Tick() {
  const std::vector<std::string> ids = runs_.ids();
  if (!ids.empty()) {
    absl::StatusOr<std::vector<LeaseRenewal>> renewed =
        store_->RenewLeases(options_.runner_id, ids, now_(), options_.lease_ms);
    {
      absl::MutexLock lock(&mu_);
      if (!renewed.ok() && !renew_failing_) {
        base::Log(LogLevel::kWarn, "operations.lease_renew_failed", "",
                  {{"error", std::string(renewed.status().message())}});
      }
      renew_failing_ = !renewed.ok();
    }
    if (renewed.ok()) HandleRenewals(ids, *renewed);
  }
  absl::StatusOr<int> settled = store_->SettleExpiredLeases(now_());
  if (settled.ok() && *settled > 0) {
    base::Log(LogLevel::kWarn, "operations.lease_expired", "",
              {{"count", *settled}, {"outcome", "outcome_uncertain"}});
  }
}

}  // namespace aevatar::chrono
