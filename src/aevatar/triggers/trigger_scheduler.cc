#include "aevatar/triggers/trigger_scheduler.h"

#include <utility>

#include "aevatar/workflow/cron_schedule.h"
#include "base/api_error.h"
#include "base/log.h"

namespace aevatar::orchestrator {

TriggerScheduler::TriggerScheduler(TriggerStore* store, Fire fire, Clock clock, int64_t tick_ms)
    : store_(store), fire_(std::move(fire)), clock_(std::move(clock)), tick_ms_(tick_ms) {
  if (tick_ms_ < 10) tick_ms_ = 10;
}

TriggerScheduler::~TriggerScheduler() { Stop(); }

void TriggerScheduler::Start() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void TriggerScheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<int> TriggerScheduler::TickOnce(int64_t now_ms) {
  auto schedules = store_->Schedules();
  if (!schedules.ok()) return schedules.status();
  int fired = 0;
  for (const TriggerRecord& trigger : *schedules) {
    auto schedule = CronSchedule::Parse(trigger.cron);
    if (!schedule.ok()) {
      base::Log(base::LogLevel::kWarn, "trigger.cron_invalid", trigger.trigger_id,
                {{"trigger_id", trigger.trigger_id}});
      continue;
    }
    const std::optional<int64_t> slot = schedule->LatestAtOrBefore(now_ms);
    // Slots before the trigger existed never fire; claimed ones never again.
    if (!slot || *slot < trigger.created_at_ms || *slot <= trigger.last_slot_ms) continue;
    auto claimed = store_->ClaimSlot(trigger.trigger_id, *slot);
    if (!claimed.ok()) return claimed.status();
    if (!*claimed) continue;  // another replica fired it
    base::Log(base::LogLevel::kInfo, "trigger.slot_claimed", trigger.trigger_id,
              {{"trigger_id", trigger.trigger_id}, {"slot_ms", *slot}});
    fire_(trigger, *slot);
    ++fired;
  }
  return fired;
}

void TriggerScheduler::Loop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      if (stopping_) return;
      mu_.AwaitWithTimeout(absl::Condition(&stop), absl::Milliseconds(tick_ms_));
      if (stopping_) return;
    }
    try {
      auto fired = TickOnce(clock_());
      if (!fired.ok()) {
        base::Log(base::LogLevel::kWarn, "trigger.tick_failed", "",
                  {{"code", base::ApiCode(fired.status())}});
      }
    } catch (...) {
      base::Log(base::LogLevel::kWarn, "trigger.tick_failed", "", {{"code", "exception"}});
    }
  }
}

}  // namespace aevatar::orchestrator
