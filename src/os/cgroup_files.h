#ifndef AEVATAR_OS_CGROUP_FILES_H_
#define AEVATAR_OS_CGROUP_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Small file helpers shared by the cgroup v1 and v2 implementations.
namespace aevatar::os::cgroup_files {

absl::Status WriteFile(const std::string& path, std::string_view value);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Parses the first integer in the file ("12345\n").
absl::StatusOr<uint64_t> ReadNumber(const std::string& path);
// Returns the value of `key` in a flat keyed file ("oom_kill 3\n…"), or 0 when
// the key is absent.
absl::StatusOr<uint64_t> ReadKeyed(const std::string& path, std::string_view key);
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
