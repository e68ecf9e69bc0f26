#include "os/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/errno_error.h"

namespace aevatar::os {

pid_t CurrentPid() { return ::getpid(); }

bool RunningAsRoot() { return ::geteuid() == 0; }

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

bool IsWritableDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         ::access(path.c_str(), W_OK | X_OK) == 0;
}

HostPath InspectHostPath(const std::string& path) {
  HostPath result;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return result;
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = ::readlink(path.c_str(), target, sizeof(target));
    if (n <= 0 || n == static_cast<ssize_t>(sizeof(target))) return result;
    result.kind = HostPath::Kind::kSymlink;
    result.link_target.assign(target, static_cast<size_t>(n));
  } else {
    result.kind = S_ISDIR(st.st_mode) ? HostPath::Kind::kDirectory : HostPath::Kind::kOther;
  }
  return result;
}

using base::ErrnoError;

ChildProcess::~ChildProcess() {
  if (!pidfd_.valid() || reaped_) return;
  (void)Signal(SIGKILL);
  (void)Wait();
}

absl::Status ChildProcess::Signal(int sig) {
  if (::syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) != 0 && errno != ESRCH) {
    return ErrnoError("pidfd_send_signal", errno);
  }
  return absl::OkStatus();
}

bool ChildProcess::HasExited() const {
  if (reaped_) return true;
  pollfd exited{pidfd_.get(), POLLIN, 0};  // a pidfd polls readable once its process exits
  int n;
  do {
    n = ::poll(&exited, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

absl::StatusOr<int> ChildProcess::Wait() {
  siginfo_t info{};
  for (;;) {
    if (::waitid(P_PIDFD, static_cast<id_t>(pidfd_.get()), &info, WEXITED) == 0) break;
    if (errno != EINTR) return ErrnoError("waitid", errno);
  }
  reaped_ = true;
  // Rebuild a classic wait status from the siginfo.
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  return info.si_status & 0x7f;
}

absl::StatusOr<ChildProcess> SpawnProgram(const std::vector<std::string>& argv,
                                          const std::vector<std::string>& envp, int stdin_fd,
                                          int stdout_fd, int stderr_fd) {
  std::vector<char*> argv_ptrs;
  for (const auto& arg : argv) argv_ptrs.push_back(const_cast<char*>(arg.c_str()));
  argv_ptrs.push_back(nullptr);
  std::vector<char*> envp_ptrs;
  for (const auto& var : envp) envp_ptrs.push_back(const_cast<char*>(var.c_str()));
  envp_ptrs.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, argv_ptrs[0], &actions, &attr, argv_ptrs.data(), envp_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return ErrnoError("posix_spawn " + argv[0], err);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int open_err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return ErrnoError("pidfd_open", open_err);
  }
  ::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  return ChildProcess(pid, UniqueFd(pidfd));
}

}  // namespace aevatar::os
