#ifndef AEVATAR_SANDBOX_GVISOR_BUNDLE_H_
#define AEVATAR_SANDBOX_GVISOR_BUNDLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// The on-disk side of one gVisor run, in a private scratch directory:
//
//   <base>/chrono-gvisor-XXXXXX/     0700 root; removed with everything inside
//     config.json                    the OCI config, rewritten for each stage
//     rootfs/                        the container root, mounted read-only
//       usr/ proc/ dev/ sys/ tmp/ workspace/   empty mount points
//       bin -> usr/bin, lib -> …     mirrors the host's merged-/usr links
//       etc/passwd, group, hosts, …  generated, never the host's
//     workspace/                     0755 65534:65534, bound read-write at /workspace
//                                    and shared by the run's stages (TypeScript)
//     state/                         runsc --root: this run's container state
//     logs/                          runsc's own log files
//
// Move-only; the destructor removes the tree. Not thread-safe (one run owns it).
class GvisorRunDir {
 public:
  // Creates a fresh directory under `base_dir` and lays out the rootfs and the
  // workspace, with `source` written (as data, mode 0644) to `source_path`,
  // an absolute path under /workspace.
  static absl::StatusOr<GvisorRunDir> Create(const std::string& base_dir,
                                             const std::string& source_path,
                                             std::string_view source);

  GvisorRunDir(GvisorRunDir&& other) noexcept;
  GvisorRunDir& operator=(GvisorRunDir&&) = delete;
  GvisorRunDir(const GvisorRunDir&) = delete;
  GvisorRunDir& operator=(const GvisorRunDir&) = delete;
  ~GvisorRunDir();

  const std::string& path() const { return path_; }
  std::string config_path() const { return path_ + "/config.json"; }
  std::string rootfs_dir() const { return path_ + "/rootfs"; }
  std::string workspace_dir() const { return path_ + "/workspace"; }
  std::string state_dir() const { return path_ + "/state"; }
  std::string log_dir() const { return path_ + "/logs"; }

  // Host top-level directories (e.g. /lib64 on a host without merged /usr)
  // that are real directories rather than links into /usr: the OCI config
  // binds them read-only.
  const std::vector<std::string>& host_dirs_to_bind() const { return host_dirs_to_bind_; }

  // Lays out `files` (validated server files) in the rootfs: their parent
  // directories (0755) and a file (0444) each, empty as a bound file's
  // mount point or holding a written file's contents.
  absl::Status AddServerFiles(const std::vector<ServerFile>& files) const;

  // Makes the mount point of each memory dir (validated names) in the
  // workspace: the tmpfs the config mounts there covers it.
  absl::Status AddMemoryDirMountPoints(const std::vector<std::string>& names) const;

  // Replaces config.json with `text`.
  absl::Status WriteConfig(std::string_view text) const;

 private:
  explicit GvisorRunDir(std::string path) : path_(std::move(path)) {}
  absl::Status LayOutRootfs();
  absl::Status LayOutWorkspace(const std::string& source_path, std::string_view source);

  std::string path_;  // empty once moved from
  std::vector<std::string> host_dirs_to_bind_;
};

// Returns the default parent for run directories: /run when it is a writable
// directory (root-only on a normal host), otherwise /tmp.
std::string DefaultGvisorScratchBase();

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_BUNDLE_H_
