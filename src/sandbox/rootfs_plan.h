#ifndef AEVATAR_SANDBOX_ROOTFS_PLAN_H_
#define AEVATAR_SANDBOX_ROOTFS_PLAN_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "os/child_plan.h"
#include "sandbox/run_spec.h"
#include "sandbox/runtime.h"

namespace aevatar::sandbox {

// The unprivileged identity programs run as.
inline constexpr uid_t kSandboxUid = 65534;
inline constexpr gid_t kSandboxGid = 65534;

// Where the new root tmpfs is mounted inside the run's private mount
// namespace before pivot_root. Any existing directory works; /tmp always
// exists and the mount is invisible outside the run.
inline constexpr char kRootMountPoint[] = "/tmp";

// Builds the filesystem of one native run as a list of os::FsStep:
//   /usr (and /bin, /lib*, /sbin links) read-only, nosuid, nodev from the host;
//   a generated /etc (passwd, group, hosts; never the host's);
//   a new /proc; a minimal /dev (null, zero, full, random, urandom, shm);
//   size-limited tmpfs /tmp and /workspace, and one in /workspace per memory
//   dir (RunSpec::memory_dirs); the source file in /workspace (none for an
//   empty source_path: a warm interpreter writes it, warm_python.h);
//   each server file (RunSpec::server_files) bound or written read-only at
//   its path under /opt, its parent directories made in the root tmpfs
//   (which grows by the written files' sizes);
//   an empty read-only tmpfs over each of `layout`'s hidden library dirs,
//   and the chosen runtime's root bound read-only (nosuid, nodev) at its
//   sandbox dir, with the layout's links (runtime_env.h).
// Owns every string the steps point to; do not copy after steps() is used.
class RootfsPlan {
 public:
  RootfsPlan(const Limits& limits, const std::string& source_path, const std::string& source,
             const std::vector<ServerFile>& server_files = {},
             const std::vector<std::string>& memory_dirs = {}, const RuntimeLayout& layout = {});
  RootfsPlan(const RootfsPlan&) = delete;
  RootfsPlan& operator=(const RootfsPlan&) = delete;

  const std::vector<os::FsStep>& steps() const { return steps_; }
  const char* root_options() const { return root_options_.c_str(); }

 private:
  // Returns a stable C string for `text` (kept alive by this plan).
  const char* Keep(std::string text);
  // Host path `path` joined under the new root's mount point.
  const char* Under(const std::string& path);
  void AddHostUsrLinks();
  void AddEtc();
  void AddDev(const Limits& limits);
  void AddServerFile(const ServerFile& file);
  void AddRuntime(const RuntimeLayout& layout);
  // mkdir of each parent directory of the absolute `path` (not `path` itself).
  void AddParents(const std::string& path);

  std::deque<std::string> strings_;
  std::vector<std::shared_ptr<const std::string>> contents_;  // written server files
  std::vector<os::FsStep> steps_;
  std::string root_options_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_ROOTFS_PLAN_H_
