#ifndef AEVATAR_OS_CGROUP_FILES_H_
#define AEVATAR_OS_CGROUP_FILES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "os/unique_fd.h"

// Small file helpers shared by the cgroup v1 and v2 implementations.
namespace aevatar::os::cgroup_files {

absl::Status WriteFile(const std::string& path, std::string_view value);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// The control files of one cgroup, each opened once and then reused: a
// recycled run cgroup is written and read about twenty times per run, and
// every open walks the cgroupfs path again. Reads use pread at offset 0,
// which regenerates the file's content. Not for cgroup.procs reads (cgroup
// v1 caches an open file's pid list). Not thread-safe.
class OpenFiles {
 public:
  absl::Status Write(const std::string& path, std::string_view value);
  absl::StatusOr<std::string> Read(const std::string& path);
  // Parses the first integer in the file ("12345\n").
  absl::StatusOr<uint64_t> ReadNumber(const std::string& path);
  // Returns the value of `key` in a flat keyed file ("oom_kill 3\n…"), or 0
  // when the key is absent.
  absl::StatusOr<uint64_t> ReadKeyed(const std::string& path, std::string_view key);
  // The file opened for writing; owned by this cache.
  absl::StatusOr<int> WriteFd(const std::string& path);
  // Closes every file (before the cgroup is removed).
  void Clear() { fds_.clear(); }

 private:
  absl::StatusOr<int> Fd(const std::string& path, int flags);
  std::map<std::pair<std::string, int>, UniqueFd> fds_;  // (path, O_RDONLY|O_WRONLY)
};

// mkdir that accepts an existing directory.
absl::Status MakeDir(const std::string& path);
// rmdir, retrying while the kernel still sees tasks (EBUSY) up to ~2 s.
absl::Status RemoveDir(const std::string& path);

// Removes the subdirectories of `parent` named `<prefix><pid>-<n>` whose pid
// is not a live process; non-empty ones fail to rmdir and stay. Returns how
// many were removed.
int RemoveStaleRunDirs(const std::string& parent, const std::string& prefix);

struct CgroupMount {
  std::string fstype;       // "cgroup" or "cgroup2"
  std::string mount_point;  // e.g. /sys/fs/cgroup/memory
  std::string options;      // super options, e.g. "rw,memory"
};
// Lists the cgroup mounts of this mount namespace.
absl::StatusOr<std::vector<CgroupMount>> ListCgroupMounts();

}  // namespace aevatar::os::cgroup_files

#endif  // AEVATAR_OS_CGROUP_FILES_H_
