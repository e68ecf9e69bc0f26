#ifndef AEVATAR_AEVATAR_TRIGGERS_TRIGGER_SCHEDULER_H_
#define AEVATAR_AEVATAR_TRIGGERS_TRIGGER_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/triggers/trigger_store.h"

namespace aevatar::orchestrator {

// Fires the cron triggers of saved workflows.
//
// Theory of operation. A thread wakes every tick and, for each cron trigger
// in the store, computes the latest slot at or before now (UTC minutes,
// cron_schedule.h). A slot at or after the trigger's creation and later than
// its last claimed slot is claimed in the store (TriggerStore::ClaimSlot, a
// conditional update) and, only when this process won the claim, fired.
//
// Missed slots (policy, docs/workflows.md): slots that passed while no
// aevatar ran are coalesced into one run, of the latest slot, fired on the
// first tick after start; the earlier ones are never fired. Replicas: every
// replica ticks, the claim lets exactly one of them fire a slot, and since a
// claim moves the last slot forward only, a replica whose clock lags cannot
// fire an older slot after a newer one was fired.
//
// The fire callback runs on the scheduler thread; it must return promptly
// (starting a run is enough) and handle its own failures (a claimed slot is
// not fired twice).
class TriggerScheduler {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms
  using Fire = std::function<void(const TriggerRecord& trigger, int64_t slot_ms)>;

  // `tick_ms`: how often the thread looks (default 1 s, what aevatar serve
  // uses; no flag or setting changes it).
  TriggerScheduler(TriggerStore* store, Fire fire, Clock clock, int64_t tick_ms = 1000);
  ~TriggerScheduler();

  void Start();
  void Stop();

  // One pass at `now_ms` on the calling thread: the number of slots this
  // process claimed and fired. A trigger whose expression no longer parses
  // is skipped (and logged).
  absl::StatusOr<int> TickOnce(int64_t now_ms);

 private:
  void Loop();

  TriggerStore* store_;
  Fire fire_;
  Clock clock_;
  int64_t tick_ms_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_TRIGGERS_TRIGGER_SCHEDULER_H_
