#ifndef AEVATAR_OS_CGROUP_POOL_H_
#define AEVATAR_OS_CGROUP_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "os/cgroup.h"

namespace aevatar::os {

// Recycles run cgroups: creating and removing cgroup directories (five
// hierarchies on cgroup v1) costs more than a whole small run. A cgroup is
// given back only when it is empty — no process of the previous run is left
// — and gets the next run's limits before reuse. Its counters are never
// reset, so callers diff them (see CgroupUsageDelta). Thread-safe.
class CgroupPool {
 public:
  // `manager` must outlive the pool. New cgroups are named `<prefix><n>`.
  // With `shared_slots` > 0 the pool first claims one of that many cgroups
  // shared with other processes (ClaimSharedCgroup), for one-shot callers
  // whose own pool dies with them.
  CgroupPool(CgroupManager* manager, std::string name_prefix, size_t max_idle = 8,
             size_t shared_slots = 0);
  ~CgroupPool();  // removes every idle cgroup

  // Returns an empty cgroup with `limits` applied.
  absl::StatusOr<std::unique_ptr<RunCgroup>> Take(const CgroupLimits& limits);
  // Takes back a used cgroup: kept for reuse when empty and the pool has
  // room, removed (killing what is left) otherwise.
  void GiveBack(std::unique_ptr<RunCgroup> cgroup);

 private:
  CgroupManager* const manager_;
  const std::string prefix_;
  const size_t max_idle_;
  const size_t shared_slots_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<RunCgroup>> idle_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

// What a run used: `after` minus `before` for the cumulative counters (the
// memory peak is not cumulative and is taken from `after`).
CgroupUsage CgroupUsageDelta(const CgroupUsage& before, const CgroupUsage& after);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_CGROUP_POOL_H_
