#ifndef AEVATAR_OS_CGROUP_H_
#define AEVATAR_OS_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace aevatar::os {

struct CgroupLimits {
  uint64_t memory_bytes = 512ull << 20;
  uint32_t max_pids = 128;
  uint32_t cpu_weight = 100;  // v2 weight scale (1..10000); v1 maps it to shares
};

// What the kernel counted for one run's cgroup.
struct CgroupUsage {
  uint64_t cpu_ns = 0;
  uint64_t memory_peak_bytes = 0;  // 0 when the kernel does not report it
  uint64_t oom_kills = 0;          // processes the OOM killer took in this cgroup
  uint64_t pids_max_events = 0;    // forks refused by the pids limit
};

// One run's cgroup (in every controller it needs). Removes itself on
// destruction, killing any process still inside first. Not thread-safe.
class RunCgroup {
 public:
  virtual ~RunCgroup() = default;
  // Moves process `pid` (and later its descendants) into this cgroup.
  virtual absl::Status AddProcess(pid_t pid) = 0;
  // Applies `limits` (memory and swap, pids, CPU weight) to an empty cgroup;
  // it may be applied again with other limits before the next run.
  virtual absl::Status SetLimits(const CgroupLimits& limits) = 0;
  // True when no process is in the cgroup (in any of its hierarchies).
  virtual bool IsEmpty() const = 0;
  // The cgroup.procs files a process writes "0" to, to join this cgroup itself.
  virtual std::vector<std::string> ProcsFiles() const = 0;
  // The same files opened for writing, owned by this cgroup and kept open
  // across reuse; they can be handed to the process that joins.
  virtual absl::StatusOr<std::vector<int>> JoinFds() = 0;
  virtual absl::StatusOr<CgroupUsage> ReadUsage() = 0;
  // Sends SIGKILL to every process in the cgroup; they leave it as they die,
  // which may take a moment (IsEmpty tells).
  virtual absl::Status KillAll() = 0;
  // Kills what is left, removes the directories; reports leftovers.
  virtual absl::Status Destroy() = 0;
  // From now on the destructor leaves the directories in place, for the
  // next holder of a shared cgroup (see ClaimSharedCgroup).
  virtual void Keep() = 0;
};

// Creates run cgroups under one parent ("chrono-sandbox") of the detected
// hierarchy. Thread-safe after construction.
class CgroupManager {
 public:
  virtual ~CgroupManager() = default;
  // "v1" or "v2".
  virtual std::string_view version() const = 0;
  // Removes empty run cgroups `<prefix><pid>-<n>` left behind by processes
  // that no longer exist (a service killed with -9, a test that leaked its
  // engine). Best effort; returns how many were removed.
  virtual int RemoveStale(std::string_view prefix) = 0;
  // Creates `<parent>/<name>` without limits of its own.
  virtual absl::StatusOr<std::unique_ptr<RunCgroup>> CreateUnlimited(std::string_view name) = 0;
  // Creates `<parent>/<name>` with `limits` applied.
  absl::StatusOr<std::unique_ptr<RunCgroup>> Create(std::string_view name,
                                                    const CgroupLimits& limits) {
    auto cgroup = CreateUnlimited(name);
    if (!cgroup.ok()) return cgroup;
    if (absl::Status st = (*cgroup)->SetLimits(limits); !st.ok()) return st;
    return cgroup;
  }
};

// Detects the host's cgroup layout from /proc/self/mountinfo and returns a
// manager for it: v2 when the unified hierarchy offers the memory and pids
// controllers, otherwise v1 when memory, pids, cpu, cpuacct and freezer
// hierarchies are mounted. Fails closed (FailedPrecondition) when neither
// can enforce the limits.
absl::StatusOr<std::unique_ptr<CgroupManager>> DetectCgroupManager(std::string_view parent_name);

// The two implementations, exposed for tests that pin a version; `mounts`
// is the host's cgroup mounts (cgroup_files::ListCgroupMounts).
namespace cgroup_files {
struct CgroupMount;
}
absl::StatusOr<std::unique_ptr<CgroupManager>> MakeCgroupV1Manager(
    std::string_view parent_name, const std::vector<cgroup_files::CgroupMount>& mounts);
absl::StatusOr<std::unique_ptr<CgroupManager>> MakeCgroupV2Manager(
    std::string_view parent_name, const std::vector<cgroup_files::CgroupMount>& mounts);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_CGROUP_H_
