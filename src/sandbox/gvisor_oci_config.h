#ifndef AEVATAR_SANDBOX_GVISOR_OCI_CONFIG_H_
#define AEVATAR_SANDBOX_GVISOR_OCI_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// Everything config.json says about one stage of a gVisor run.
struct OciConfigInput {
  std::string rootfs_dir;                      // host path, mounted read-only as /
  std::string workspace_dir;                   // host path, bound read-write at /workspace
  std::vector<std::string> host_dirs_to_bind;  // e.g. "/lib64", bound read-only at the same path
  std::vector<std::string> argv;               // the stage's argv (argv[0] included)
  std::vector<std::string> envp;               // the program's whole environment
  Limits limits;                               // rlimits and tmpfs sizes come from here
  uint64_t memory_limit_bytes = 0;             // linux.resources.memory (and swap)
  int64_t pids_limit = 0;                      // linux.resources.pids
  std::string cgroups_path;                    // linux.cgroupsPath, e.g. /chrono-sandbox/gvisor-1-2
  std::vector<ServerFile> server_files;        // bound read-only at their sandbox paths
  std::vector<std::string> memory_dirs;        // a tmpfs each at /workspace/NAME
  // The network namespace the sandbox joins (e.g. /proc/PID/fd/N), with
  // runsc --network=host; "" gives gVisor a new, empty one.
  std::string netns_path;
};

// The RLIMIT_CPU soft limit of a run, in seconds (the hard limit is one more),
// as the native backend applies it: cpu_secs, or the wall timeout when 0.
uint64_t CpuLimitSecs(const Limits& limits);

// Returns the OCI runtime config (config.json text) for `input`: uid/gid
// 65534, no capabilities, noNewPrivileges, cwd /workspace, the native
// backend's rlimits, new pid/net/ipc/uts/mount namespaces, /usr read-only,
// gVisor's own /proc and /dev, size-limited tmpfs /tmp and /dev/shm.
// The text holds the environment's values: write it only to private files.
// InvalidArgument when an env value or argument is not valid UTF-8 (OCI
// configs are JSON, which cannot carry other bytes faithfully).
absl::StatusOr<std::string> BuildOciConfig(const OciConfigInput& input);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_OCI_CONFIG_H_
