#ifndef AEVATAR_SANDBOX_GVISOR_BACKEND_H_
#define AEVATAR_SANDBOX_GVISOR_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "os/cgroup.h"
#include "sandbox/backend.h"

namespace aevatar::sandbox {

// Runs a PreparedRun under gVisor's runsc (ptrace platform, no network) from
// a generated OCI bundle, with the same limits as the native backend. With a
// RunControl::netns_fd the sandbox instead uses that namespace's host
// sockets (runsc --network=host, the config naming the namespace): it reaches
// what the namespace holds (e.g. one relay listener) and nothing else.
//
// One run: a private scratch directory (gvisor_bundle.h) with a read-only
// rootfs and a host-side /workspace; a run cgroup that runsc places the
// sandbox in (gvisor_cgroups.h); then one `runsc run` per stage, in order,
// until a stage does not exit 0. Verdicts come from the container's wait
// status (runsc's log, gvisor_runsc.h) and the cgroup's OOM and pids
// counters; a failure of runsc or gVisor itself is an error.
//
// Where gVisor differs from the native backend:
//  - memory and pids limits are host cgroup limits that also hold gVisor's
//    own processes; both are adjusted for them (gvisor_cgroups.h). Hitting
//    either takes the whole sandbox down: memory_limit / pids_limit.
//  - cpu_ms, max_rss_kb and the CPU that tells an RLIMIT_CPU SIGKILL apart
//    are the whole sandbox's (cgroup counters), gVisor's overhead included.
//  - /workspace is a host directory (so the stages share it), bounded per
//    file by RLIMIT_FSIZE rather than by a tmpfs size.
//  - env values must be valid UTF-8 (OCI configs are JSON).
//
// Thread-safe: runs have their own directories, container ids and cgroups.
class GvisorBackend : public Backend {
 public:
  // Detects cgroups once; fails closed (like the native backend) when they
  // cannot enforce the limits, or when runsc or /usr/bin/prlimit (which
  // enforces RLIMIT_CPU inside gVisor) is missing. Requires root, as runsc
  // does. `scratch_base_dir` is where run directories are made ("" = /run,
  // or /tmp when /run is not writable).
  static absl::StatusOr<std::unique_ptr<GvisorBackend>> Create(
      const std::string& runsc_path, const std::string& scratch_base_dir = "");

  std::string_view name() const override { return "gvisor"; }
  absl::StatusOr<RunResult> Run(const PreparedRun& run, const RunControl& control) override;

 private:
  GvisorBackend(std::string runsc_path, std::string scratch_base_dir,
                std::unique_ptr<os::CgroupManager> cgroups, std::vector<std::string> cgroup_roots)
      : runsc_path_(std::move(runsc_path)),
        scratch_base_dir_(std::move(scratch_base_dir)),
        cgroups_(std::move(cgroups)),
        cgroup_roots_(std::move(cgroup_roots)) {}

  const std::string runsc_path_;
  const std::string scratch_base_dir_;
  const std::unique_ptr<os::CgroupManager> cgroups_;
  const std::vector<std::string> cgroup_roots_;  // every cgroup mount point
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_BACKEND_H_
