#ifndef AEVATAR_SANDBOX_NATIVE_BACKEND_H_
#define AEVATAR_SANDBOX_NATIVE_BACKEND_H_

#include <atomic>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "os/cgroup.h"
#include "os/cgroup_pool.h"
#include "os/netns_pool.h"
#include "os/seccomp_program.h"
#include "sandbox/backend.h"
#include "sandbox/ready_pool.h"
#include "sandbox/warm_python.h"

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

  // Keeps `count` Python sandboxes started ahead of time (warm_python.h) for
  // runs like `profile`: Python in the default runtime, the same limits and
  // program environment, no server files or memory dirs, no given network
  // namespace. Any other run, or one that finds none ready, starts cold.
  // Call once, before the first run; `profile.spec` may go after the call.
  void KeepPythonWarm(const PreparedRun& profile, size_t count);
  WarmPythonStats warm_stats() const;
  // Whether `run` is one the warm sandboxes are kept for (native_warm.cc);
  // `given_netns` is RunControl::netns_fd.
  bool FitsWarm(const PreparedRun& run, int given_netns) const;

 private:
  class InitPlan;     // what the init is told (native_backend.cc)
  struct StartedRun;  // a spawned init and its cgroup, pipes and start time
  struct WarmRun;     // a started init whose interpreter waits for its program
  struct WarmProfile;

  NativeBackend(os::UniqueFd init_exe, std::unique_ptr<os::CgroupManager> cgroups,
                std::unique_ptr<os::NetnsPool> netns_pool, size_t shared_cgroups);

  // A run in three steps: the plan (built before the clone), the spawn of
  // the init with its cgroup and network namespace handed over, and the
  // collection of its output, usage and verdict.
  // `given_netns` (-1: none) is RunControl::netns_fd.
  // `stdin_fd` is the program's stdin, passed to the init.
  absl::StatusOr<std::unique_ptr<StartedRun>> Spawn(const InitPlan& plan, const Limits& limits,
                                                    os::UniqueFd stdin_fd, int given_netns);
  static absl::StatusOr<RunResult> Collect(const InitPlan& plan, StartedRun& run,
                                           const Limits& limits, const RunControl& control);
  // On the warm pool's thread: an init whose interpreter waits on its stdin.
  absl::StatusOr<std::unique_ptr<WarmRun>> SpawnWarm();
  // A ready warm sandbox `run` may use, or null.
  std::unique_ptr<WarmRun> TakeWarm(const PreparedRun& run, const RunControl& control);
  // Runs `run` in a warm sandbox (native_warm.cc); nullopt: none fits or is
  // ready, and the run starts cold.
  std::optional<absl::StatusOr<RunResult>> TryRunWarm(const PreparedRun& run,
                                                      const RunControl& control);

  const os::UniqueFd init_exe_;  // chrono-sandbox-init, O_PATH
  const os::SeccompProgram seccomp_;
  const std::unique_ptr<os::CgroupManager> cgroups_;
  std::unique_ptr<os::NetnsPool> netns_pool_;  // null: a namespace per clone
  os::CgroupPool cgroup_pool_;
  std::unique_ptr<WarmProfile> warm_profile_;  // null: no warm sandboxes
  std::atomic<size_t> warm_served_{0};
  std::atomic<size_t> warm_lost_{0};  // died while waiting, or at dispatch
  // Last: its sandboxes hold cgroups of cgroup_pool_ and point into
  // warm_profile_, so it goes first.
  std::unique_ptr<ReadyPool<WarmRun>> warm_pool_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_NATIVE_BACKEND_H_
