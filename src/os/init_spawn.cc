#include "os/init_spawn.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sanitizer/asan_interface.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>

#include "base/errno_error.h"

namespace aevatar::os {
namespace {

constexpr size_t kChildStackBytes = 64 << 10;

// Only root may change it: owned by root, not world-writable, and writable
// by its group only when that group is root's (a umask of 002 gives that).
bool OnlyRootMayWrite(const struct stat& info) {
  return info.st_uid == 0 && (info.st_mode & S_IWOTH) == 0 &&
         ((info.st_mode & S_IWGRP) == 0 || info.st_gid == 0);
}

struct SpawnArgs {
  int init_exe;
  const int* fds;
};

// Runs in the child on its own stack but in the caller's memory, while the
// calling thread is suspended (CLONE_VFORK): async-signal-safe calls only,
// like the child side of posix_spawn.
int ExecInit(void* raw) {
  const auto* args = static_cast<const SpawnArgs*>(raw);
  // Everything above the target range first (3..9 for the plan's fds, 10 for
  // the executable), so that placing one cannot clobber another.
  constexpr int kExeSlot = kInitImageFd + kInitFdCount;
  int moved[kInitFdCount + 1];
  for (int i = 0; i <= kInitFdCount; ++i) {
    const int source = i < kInitFdCount ? args->fds[i] : args->init_exe;
    moved[i] = ::fcntl(source, F_DUPFD_CLOEXEC, kExeSlot + 1);
    if (moved[i] < 0) ::_exit(127);
  }
  for (int i = 0; i < kInitFdCount; ++i) {
    if (::dup2(moved[i], kInitImageFd + i) < 0) ::_exit(127);  // clears close-on-exec
  }
  if (::dup3(moved[kInitFdCount], kExeSlot, O_CLOEXEC) < 0) ::_exit(127);
  ::syscall(SYS_close_range, 0U, static_cast<unsigned>(kInitImageFd - 1), 0U);
  ::syscall(SYS_close_range, static_cast<unsigned>(kExeSlot + 1), ~0U, 0U);
  if (::prctl(PR_SET_PDEATHSIG, static_cast<unsigned long>(SIGKILL), 0UL, 0UL, 0UL) != 0) {
    ::_exit(127);
  }
  char name[] = "chrono-sandbox-init";
  char* argv[] = {name, nullptr};
  char* envp[] = {nullptr};
  ::syscall(SYS_execveat, kExeSlot, "", argv, envp, AT_EMPTY_PATH);
  ChildFailure failure{ChildStep::kExec, errno, -1};
  [[maybe_unused]] ssize_t n = ::write(kInitErrorFd, &failure, sizeof(failure));
  ::_exit(127);
}

}  // namespace

absl::StatusOr<UniqueFd> OpenInitExecutable(const std::string& path) {
  const std::filesystem::path file(path);
  if (!file.is_absolute()) {
    return absl::InvalidArgumentError("the sandbox init path must be absolute: " + path);
  }
  // Neither the file nor the directory holding it may be replaceable by
  // anyone but root; the file itself must not be a symlink.
  struct stat dir {};
  const std::string dir_path = file.parent_path().string();
  if (::stat(dir_path.c_str(), &dir) != 0) return base::ErrnoError("stat " + dir_path, errno);
  if (!OnlyRootMayWrite(dir)) {
    return absl::FailedPreconditionError("only root may write the directory of the sandbox init " +
                                         dir_path);
  }
  UniqueFd fd(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoError("open the sandbox init " + path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return base::ErrnoError("stat " + path, errno);
  if (!S_ISREG(info.st_mode) || !OnlyRootMayWrite(info)) {
    return absl::FailedPreconditionError("the sandbox init " + path +
                                         " must be a file (not a link) only root may write");
  }
  return fd;
}

absl::StatusOr<std::string> DefaultInitExecutablePath() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || !self.is_absolute()) {
    return absl::FailedPreconditionError(
        "cannot find the running executable to locate chrono-sandbox-init");
  }
  return (self.parent_path() / "chrono-sandbox-init").string();
}

absl::StatusOr<ChildProcess> SpawnSandboxInit(int namespace_flags, int init_exe,
                                              const std::array<int, kInitFdCount>& fds) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return base::ErrnoError("mmap the init's stack", errno);
  // No handler of ours may run in the child while it shares our memory. The
  // raw syscall, because pthread_sigmask leaves glibc's two internal signals
  // (cancellation, set*id broadcast) unblocked.
  uint64_t all = ~uint64_t{0}, previous = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &previous, sizeof(all));
  SpawnArgs args{init_exe, fds.data()};
  int pidfd = -1;
  const int pid =
      ::clone(ExecInit, static_cast<char*>(stack) + kChildStackBytes,
              namespace_flags | CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd);
  const int clone_errno = errno;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous, nullptr, sizeof(previous));
  // Under AddressSanitizer the child poisoned its frames' redzones on this
  // stack and never returned to unpoison them (it exec'd): clear them, or
  // the next mapping at this address (say SQLite's WAL index) reads as a
  // stack overflow. A no-op in other builds.
  ASAN_UNPOISON_MEMORY_REGION(stack, kChildStackBytes);
  ::munmap(stack, kChildStackBytes);
  if (pid < 0) return base::ErrnoError("clone the sandbox init", clone_errno);
  return ChildProcess(pid, UniqueFd(pidfd));
}

}  // namespace aevatar::os
