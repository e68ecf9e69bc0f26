#ifndef AEVATAR_OS_SHARED_CGROUP_H_
#define AEVATAR_OS_SHARED_CGROUP_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "os/cgroup.h"

namespace aevatar::os {

// Shared cgroups let one-shot processes (`chrono-sandbox run`) skip creating
// and removing a cgroup per run, which on cgroup v1 (five hierarchies) costs
// more than the rest of the run's cgroup work together.
//
// Slot `<prefix><n>` (n < `slots`) belongs to whoever holds an exclusive
// flock on its directory; the kernel drops the lock when its holder dies, so
// a crashed process leaves a claimable slot, never a stuck one. Slots are
// never removed by a run (a remover would race the next claimer); they stay
// as empty cgroups, like any idle run cgroup the service keeps.
//
// A known, bounded imprecision: when a holder dies, the kernel releases its
// lock before its sandbox init gets the parent-death SIGKILL, so a new holder
// may briefly see that dying init join the slot; it is killed moments later
// and counted against the new run's limits meanwhile (never more lenient).
//
// Claims a free slot, creating its directories when missing, and returns it
// empty. The returned cgroup keeps the directories when destroyed: what is
// left of a run is killed and the lock released. ResourceExhausted when
// every slot is held by another process.
absl::StatusOr<std::unique_ptr<RunCgroup>> ClaimSharedCgroup(CgroupManager& manager,
                                                             std::string_view prefix, size_t slots);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_SHARED_CGROUP_H_
