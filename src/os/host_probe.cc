#include "os/host_probe.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_error.h"
#include "os/output_pump.h"
#include "os/process.h"
#include "os/unique_fd.h"

namespace aevatar::os {
namespace {

// A probe child exits with 0 on success, else with the errno of the call that
// failed; kNotSet when a value read back was wrong.
constexpr int kNotSet = 255;

// Runs `probe` in a forked child and maps its exit to a Status naming `what`.
// DANGER: after fork in a possibly multi-threaded process; `probe` may make
// raw system calls only (no malloc, locks or logging) and returns the exit code.
template <typename Probe>
absl::Status InChild(const char* what, Probe probe) {
  const pid_t pid = ::fork();
  if (pid < 0) return base::ErrnoError("fork", errno);
  if (pid == 0) ::_exit(probe());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return base::ErrnoError("waitpid", errno);
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(
        absl::StrCat(what, ": the probe was killed by signal ", WTERMSIG(status)));
  }
  const int code = WEXITSTATUS(status);
  if (code == 0) return absl::OkStatus();
  if (code == kNotSet) return absl::FailedPreconditionError(absl::StrCat(what, ": not in effect"));
  return base::ErrnoError(what, code);
}

int SetNoNewPrivs() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : kNotSet;
}

}  // namespace

absl::Status ProbeUnshare(int clone_flag) {
  return InChild("unshare", [clone_flag] { return ::unshare(clone_flag) == 0 ? 0 : errno; });
}

absl::Status ProbeNoNewPrivs() { return InChild("prctl(PR_SET_NO_NEW_PRIVS)", SetNoNewPrivs); }

absl::Status ProbeSeccompFilter(const sock_fprog* program) {
  return InChild("prctl(PR_SET_SECCOMP)", [program] {
    if (int err = SetNoNewPrivs(); err != 0) return err;
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program, 0, 0) == 0 ? 0 : errno;
  });
}

absl::StatusOr<uint64_t> FreeDiskBytes(const std::string& path) {
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0) return base::ErrnoError("statvfs " + path, errno);
  return static_cast<uint64_t>(info.f_bavail) * info.f_frsize;
}

absl::StatusOr<std::string> CaptureProgramOutput(const std::vector<std::string>& argv,
                                                 std::chrono::milliseconds timeout) {
  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();
  UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_in.valid()) return base::ErrnoError("open /dev/null", errno);
  auto child = SpawnProgram(argv, {}, null_in.get(), out->write_end.get(), err->write_end.get());
  if (!child.ok()) return child.status();
  out->write_end.reset();
  err->write_end.reset();
  for (int fd : {out->read_end.get(), err->read_end.get()}) {
    if (auto st = SetNonBlocking(fd); !st.ok()) return st;
  }
  PumpOptions options;
  options.deadline = std::chrono::steady_clock::now() + timeout;
  options.max_bytes_per_stream = 64 << 10;
  auto pumped = PumpOutput(out->read_end.get(), err->read_end.get(), *child, options);
  auto status = child->Wait();
  if (!pumped.ok()) return pumped.status();
  if (!status.ok()) return status.status();
  if (pumped->end == PumpEnd::kDeadline) {
    return absl::DeadlineExceededError(argv[0] + " did not finish in time");
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " failed (wait status ", *status, ")"));
  }
  return std::move(pumped->out.data);
}

}  // namespace aevatar::os
