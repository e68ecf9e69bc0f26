#ifndef AEVATAR_OS_SECCOMP_PROGRAM_H_
#define AEVATAR_OS_SECCOMP_PROGRAM_H_

#include <linux/filter.h>

#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace aevatar::os {

// A compiled seccomp-bpf program, built once in the parent and loaded in each
// sandboxed child with prctl(PR_SET_SECCOMP). Immutable and thread-safe.
class SeccompProgram {
 public:
  // Builds the sandbox policy: everything a runtime needs is allowed; the
  // kernel attack surface a one-shot program has no business with fails with
  // EPERM: mounts, ptrace, bpf, perf_event_open, the keyctl family, kexec and
  // modules, namespaces (unshare, setns, clone with CLONE_NEW*), userfaultfd,
  // io_uring, open_by_handle_at, clock and time setting, swap, reboot, and
  // similar. clone3 gets ENOSYS so libc falls back to clone, whose flags the
  // filter can inspect. Foreign architectures (x32, i386) kill the process.
  static absl::StatusOr<SeccompProgram> BuildSandboxPolicy();

  // Wraps an already compiled program (see PrecompiledSandboxPolicy).
  static SeccompProgram FromFilters(std::vector<sock_filter> filters) {
    return SeccompProgram(std::move(filters));
  }
  const std::vector<sock_filter>& filters() const { return filters_; }

  // Valid for the lifetime of this object.
  const sock_fprog* program() const { return &program_; }

  SeccompProgram(SeccompProgram&& other) noexcept;
  SeccompProgram& operator=(SeccompProgram&& other) noexcept;
  SeccompProgram(const SeccompProgram&) = delete;
  SeccompProgram& operator=(const SeccompProgram&) = delete;

 private:
  explicit SeccompProgram(std::vector<sock_filter> filters);
  std::vector<sock_filter> filters_;
  sock_fprog program_{};
};

}  // namespace aevatar::os

#endif  // AEVATAR_OS_SECCOMP_PROGRAM_H_
