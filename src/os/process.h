#ifndef AEVATAR_OS_PROCESS_H_
#define AEVATAR_OS_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "os/unique_fd.h"

namespace aevatar::os {

// This process's pid (for names that must not collide between processes).
pid_t CurrentPid();
// Whether this process runs with effective uid 0.
bool RunningAsRoot();

// What a host path is, without following a final symlink.
struct HostPath {
  enum class Kind { kMissing, kSymlink, kDirectory, kOther };
  Kind kind = Kind::kMissing;
  std::string link_target;  // for kSymlink
};
HostPath InspectHostPath(const std::string& path);
// Whether this process may execute `path`.
bool IsExecutable(const std::string& path);
// Whether this process may create files in the directory `path`.
bool IsWritableDirectory(const std::string& path);

// A child process owned through a pidfd. Killing and reaping go through the
// pidfd, so a recycled pid can never be hit by mistake.
class ChildProcess {
 public:
  ChildProcess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
  ChildProcess(ChildProcess&&) = default;
  ChildProcess& operator=(ChildProcess&&) = default;
  // Kills (SIGKILL) and reaps the child if the caller never waited for it.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Readable (POLLIN) once the child has exited.
  int pidfd() const { return pidfd_.get(); }

  // Sends `sig` through the pidfd; a child that already exited is not an error.
  absl::Status Signal(int sig);
  // Whether the child has exited (without reaping it).
  bool HasExited() const;
  // Blocks until the child exits and reaps it; returns its wait status.
  absl::StatusOr<int> Wait();

 private:
  pid_t pid_;
  UniqueFd pidfd_;
  bool reaped_ = false;
};

// Spawns `argv` with posix_spawn, stdin from `stdin_fd` and stdout/stderr to the
// given fds (-1 leaves them as the caller's), in a new session. For helper
// programs such as runsc, never for caller code.
absl::StatusOr<ChildProcess> SpawnProgram(const std::vector<std::string>& argv,
                                          const std::vector<std::string>& envp, int stdin_fd,
                                          int stdout_fd, int stderr_fd);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_PROCESS_H_
