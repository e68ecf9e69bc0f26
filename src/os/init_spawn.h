#ifndef AEVATAR_OS_INIT_SPAWN_H_
#define AEVATAR_OS_INIT_SPAWN_H_

#include <array>
#include <string>

#include "absl/status/statusor.h"
#include "os/init_image.h"
#include "os/process.h"
#include "os/unique_fd.h"

namespace aevatar::os {

// Opens chrono-sandbox-init for execveat (O_PATH), once: it runs as root in
// every sandbox, so `path` must be absolute and name a regular file (not a
// symlink) that only root may write (root-owned, not world-writable,
// group-writable only by group root), in a directory with the same rule.
absl::StatusOr<UniqueFd> OpenInitExecutable(const std::string& path);

// Where chrono-sandbox-init is by default: beside the running executable.
absl::StatusOr<std::string> DefaultInitExecutablePath();

// Starts the sandbox init in new namespaces (`namespace_flags`). The child is
// made with clone(CLONE_VM|CLONE_VFORK) on a private stack, so nothing of
// the caller's memory is copied (a fork of a large, multi-threaded service
// costs milliseconds in page-table copies, copy-on-write faults and TLB
// shootdowns), and execs `init_exe` at once. Before the exec it moves `fds`
// to 3, 4, ... in the order of init_image.h, closes every other descriptor
// and arranges to die with the calling thread. Returns once the exec has
// happened; an exec failure arrives as a ChildFailure on the error pipe.
absl::StatusOr<ChildProcess> SpawnSandboxInit(int namespace_flags, int init_exe,
                                              const std::array<int, kInitFdCount>& fds);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_INIT_SPAWN_H_
