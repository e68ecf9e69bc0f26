#ifndef AEVATAR_SANDBOX_GVISOR_CGROUPS_H_
#define AEVATAR_SANDBOX_GVISOR_CGROUPS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "os/cgroup.h"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// How gVisor runs meet cgroups. The engine's cgroup manager makes each run's
// cgroup (memory, pids, cpu accounting) under kGvisorCgroupParent, with the
// limits set; config.json names it as linux.cgroupsPath, and runsc, finding
// it already there, puts the sandbox (sentry and gofer) in it without
// touching its limits. runsc creates the run's directory in the hierarchies
// the manager does not use (v1 cpuset, blkio, devices, …) itself.

// The parent of every run cgroup, shared with the native backend.
inline constexpr char kGvisorCgroupParent[] = "chrono-sandbox";

// Returns the host cgroup limits for a run with `limits`. The sentry and
// gofer (gVisor's kernel and file proxy) live in the run's cgroup too:
//  - memory gets a fixed allowance for them on top of the program's limit,
//    so a program gets about what it asked for;
//  - every program process costs gVisor many host tasks (a ptrace stub with
//    its threads), so the pids limit is scaled from max_pids: a fork-bomb
//    guard of about max_pids processes, not an exact count.
os::CgroupLimits GvisorHostLimits(const Limits& limits);

// Returns the mount points of every cgroup hierarchy, in which runsc may make
// the run's directory. FailedPrecondition when runsc would resolve
// linux.cgroupsPath in another layout than `cgroups` uses (v2 vs v1): the
// sandbox would then escape the limits we set.
absl::StatusOr<std::vector<std::string>> RunscCgroupRoots(const os::CgroupManager& cgroups);

// Removes the run's directories that runsc made in the hierarchies the
// engine does not manage: runsc leaves them behind when its sandbox was
// killed. Must outlive the run's own cgroup, whose teardown kills the
// sandbox's processes first. Keeps a reference to `roots`.
class RunscCgroupSweeper {
 public:
  // `path` is the run's linux.cgroupsPath, e.g. /chrono-sandbox/gvisor-1-2.
  RunscCgroupSweeper(const std::vector<std::string>& roots, std::string path)
      : roots_(roots), path_(std::move(path)) {}
  RunscCgroupSweeper(const RunscCgroupSweeper&) = delete;
  RunscCgroupSweeper& operator=(const RunscCgroupSweeper&) = delete;
  ~RunscCgroupSweeper() { (void)Sweep(); }

  // Removes what is there (idempotent); fails when a directory stays busy.
  absl::Status Sweep();

 private:
  const std::vector<std::string>& roots_;
  const std::string path_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_CGROUPS_H_
