#ifndef AEVATAR_SANDBOX_NATIVE_BACKEND_H_
#define AEVATAR_SANDBOX_NATIVE_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "os/cgroup.h"
#include "os/cgroup_pool.h"
#include "os/netns_pool.h"
#include "os/seccomp_program.h"
#include "sandbox/backend.h"

namespace aevatar::sandbox {

// The default backend: Linux namespaces, a pivoted tmpfs root, cgroup limits,
// rlimits, no capabilities, an unprivileged uid and seccomp-bpf, set up by
// chrono-sandbox-init (src/os/init/; no shell). Requires root.
class NativeBackend : public Backend {
 public:
  // Opens the init and detects cgroups once (the seccomp program is compiled
  // at build time); fails closed when either is unusable or the process is
  // not root.
  // `prepared_namespaces`: how many network namespaces to keep ready (a
  // service wants a few); 0 creates each run's namespace in its clone.
  // `one_shot`: see EngineOptions::one_shot (replaces prepared_namespaces).
  // `init_path`: chrono-sandbox-init (empty: beside the running executable).
  static absl::StatusOr<std::unique_ptr<NativeBackend>> Create(size_t prepared_namespaces = 4,
                                                               bool one_shot = false,
                                                               const std::string& init_path = "");

  std::string_view name() const override { return "native"; }
  absl::StatusOr<RunResult> Run(const PreparedRun& run, const RunControl& control) override;

 private:
  class InitPlan;     // what the init is told (native_backend.cc)
  struct StartedRun;  // a spawned init and its cgroup, pipes and start time

  NativeBackend(os::UniqueFd init_exe, std::unique_ptr<os::CgroupManager> cgroups,
                std::unique_ptr<os::NetnsPool> netns_pool, size_t shared_cgroups);

  // A run in three steps: the plan (built before the clone), the spawn of
  // the init with its cgroup and network namespace handed over, and the
  // collection of its output, usage and verdict.
  // `given_netns` (-1: none) is RunControl::netns_fd.
  absl::StatusOr<std::unique_ptr<StartedRun>> Spawn(const InitPlan& plan, const RunSpec& spec,
                                                    int given_netns);
  static absl::StatusOr<RunResult> Collect(const InitPlan& plan, StartedRun& run,
                                           const Limits& limits, const RunControl& control);

  const os::UniqueFd init_exe_;  // chrono-sandbox-init, O_PATH
  const os::SeccompProgram seccomp_;
  const std::unique_ptr<os::CgroupManager> cgroups_;
  std::unique_ptr<os::NetnsPool> netns_pool_;  // null: a namespace per clone
  os::CgroupPool cgroup_pool_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_NATIVE_BACKEND_H_
