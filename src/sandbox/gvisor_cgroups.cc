#include "sandbox/gvisor_cgroups.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "os/cgroup_files.h"

namespace aevatar::sandbox {
namespace {

// Host memory of an idle sandbox's sentry and gofer: ~20 MiB measured.
constexpr uint64_t kSentryMemoryAllowance = 64ull << 20;
// Host tasks of an idle sandbox (sentry and gofer threads: ~35 measured) and
// per program process (a ptrace stub with its threads: ~18 measured).
constexpr int64_t kSandboxBaseTasks = 64;
constexpr int64_t kHostTasksPerProcess = 20;

}  // namespace

os::CgroupLimits GvisorHostLimits(const Limits& limits) {
  return {
      .memory_bytes = limits.memory_bytes + kSentryMemoryAllowance,
      .max_pids = static_cast<uint32_t>(kSandboxBaseTasks +
                                        kHostTasksPerProcess * int64_t{limits.max_pids}),
      .cpu_weight = 100,
  };
}

absl::StatusOr<std::vector<std::string>> RunscCgroupRoots(const os::CgroupManager& cgroups) {
  auto mounts = os::cgroup_files::ListCgroupMounts();
  if (!mounts.ok()) return mounts.status();
  // runsc takes cgroup v2 exactly when /sys/fs/cgroup itself is the unified
  // hierarchy, and the v1 per-controller mounts otherwise.
  const bool unified = std::any_of(mounts->begin(), mounts->end(), [](const auto& mount) {
    return mount.mount_point == "/sys/fs/cgroup" && mount.fstype == "cgroup2";
  });
  if ((cgroups.version() == "v2") != unified) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the gvisor backend needs runsc and the engine to agree on the cgroup layout; cgroup ",
        std::string(cgroups.version()), " was detected but /sys/fs/cgroup is ",
        unified ? "v2" : "not v2"));
  }
  std::vector<std::string> roots;
  for (const auto& mount : *mounts) roots.push_back(mount.mount_point);
  return roots;
}

absl::Status RunscCgroupSweeper::Sweep() {
  absl::Status result;
  for (const std::string& root : roots_) {
    // Absent directories are fine: RemoveDir accepts ENOENT.
    result.Update(os::cgroup_files::RemoveDir(root + path_));
  }
  return result;
}

}  // namespace aevatar::sandbox
