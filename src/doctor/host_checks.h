#ifndef AEVATAR_DOCTOR_HOST_CHECKS_H_
#define AEVATAR_DOCTOR_HOST_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "doctor/check.h"

namespace aevatar::doctor {

// What the host checks are told about the service they check for.
struct HostCheckOptions {
  // The sandbox init; empty: chrono-sandbox-init beside the running
  // executable, as the engine finds it.
  std::string init_path;
  std::string runsc_path = "/usr/bin/runsc";
  // The Codex CLI managed codex_exec runs; empty: the pinned install.
  std::string codex_path;
  // Whether managed Codex is configured (a model is set) and on which
  // backend: then a missing Codex CLI, or runsc for "gvisor", is a blocker.
  bool codex_configured = false;
  std::string codex_backend = "gvisor";
  // The state directory (or, when it does not exist yet, its nearest
  // existing parent) must have this much free space.
  std::string state_dir = ".";
  uint64_t min_free_bytes = 1ull << 30;
};

// The checks of the kernel and host facilities the sandbox engine uses, in
// order: root, namespaces (pid, mount, net, ipc, uts, cgroup, user),
// cgroups, NO_NEW_PRIVS, seccomp, the sandbox init, free disk, each language
// runtime, runsc, the Codex CLI, then a sandboxed hello world per language
// through the engine and one on gVisor. The checks share one engine, made
// by the first hello world; run them from one thread.
std::vector<Check> HostChecks(const HostCheckOptions& options);

}  // namespace aevatar::doctor

#endif  // AEVATAR_DOCTOR_HOST_CHECKS_H_
