#ifndef AEVATAR_CHRONO_LEASE_KEEPER_H_
#define AEVATAR_CHRONO_LEASE_KEEPER_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "chrono/operation_store.h"

namespace aevatar::chrono {

// Leases on running operations, seen from one runner (theory of operation):
//
// A claim leases the operation to its runner until now + lease_ms. Every
// tick the keeper renews the leases of the runs in progress here, in one
// store call that also returns each run's cancel flag, so a cancel accepted
// by any replica reaches the program within about one tick. A run whose
// lease was not renewed (another runner settled it while this one could not
// reach the store) is killed: its outcome is already recorded as uncertain.
// Each tick the keeper also settles every runner's lapsed leases as
// outcome_uncertain: a runner that died stops renewing, and whichever live
// runner ticks first after its lease ends settles its runs. Queued work
// needs no keeper: it sits in the shared queue and any runner claims it.
//
// Bounds: a dead runner's runs are settled at most lease_ms + tick after its
// last renewal; a cancel reaches a run within tick plus one store call.
// Clocks of runners sharing a store must agree to well within lease_ms.

struct LeaseKeeperOptions {
  std::string runner_id;                   // the claimer named in claimed_by; non-empty
  int64_t lease_ms = 15000;                // a lease's length; > 0
  absl::Duration tick = absl::Seconds(1);  // renewal, cancel-poll and settle period
};

// The runs in progress on this runner, as the keeper acts on them.
struct RunsInProgress {
  // Ids of the operations running here now. Thread-safe.
  std::function<std::vector<std::string>()> ids;
  // Ends the run of `id` if it is still in progress (a no-op otherwise);
  // the run then finishes as it does on a cancel. Thread-safe.
  std::function<void(const std::string& id)> kill;
};

// Renews this runner's leases, relays cancels, settles lapsed leases; on a
// thread of its own between Start and Stop. Thread-safe.
class LeaseKeeper {
 public:
  // `store` must outlive the keeper; `now` is the clock leases are in.
  LeaseKeeper(LeaseKeeperOptions options, OperationStore* store, base::UnixMsClock now,
              RunsInProgress runs);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Starts the thread (ticks at once, then every options.tick).
  void Start();
  // Stops and joins the thread; idempotent.
  void Stop();

  // One round as the thread does it: renew, relay cancels, kill lost runs,
  // settle lapsed leases. Store errors are logged, never fatal (the next
  // tick retries).
  void Tick();

 private:
  void Loop();
  // Kills the runs that were cancelled or whose lease was lost.
  void HandleRenewals(const std::vector<std::string>& ids,
                      const std::vector<LeaseRenewal>& renewed);

  const LeaseKeeperOptions options_;
  OperationStore* const store_;
  const base::UnixMsClock now_;
  const RunsInProgress runs_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Runs whose cancel was relayed (logged once each) and whether the last
  // renewal failed (logged once per outage).
  std::set<std::string> relayed_ ABSL_GUARDED_BY(mu_);
  bool renew_failing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_LEASE_KEEPER_H_
