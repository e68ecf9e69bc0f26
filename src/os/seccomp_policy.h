#ifndef AEVATAR_OS_SECCOMP_POLICY_H_
#define AEVATAR_OS_SECCOMP_POLICY_H_

#include "absl/status/statusor.h"
#include "os/seccomp_program.h"

namespace aevatar::os {

// Builds the sandbox policy: everything a runtime needs is allowed; the
// kernel attack surface a one-shot program has no business with fails with
// EPERM: mounts, ptrace, bpf, perf_event_open, the keyctl family, kexec and
// modules, namespaces (unshare, setns, clone with CLONE_NEW*), userfaultfd,
// io_uring, open_by_handle_at, clock and time setting, swap, reboot, and
// similar. clone3 gets ENOSYS so libc falls back to clone, whose flags the
// filter can inspect. Foreign architectures (x32, i386) kill the process.
// Compiled with libseccomp: at build time by seccomp_policy_gen (the engine
// loads that copy, see precompiled_seccomp_policy.h) and by its tests.
absl::StatusOr<SeccompProgram> BuildSandboxSeccompPolicy();

}  // namespace aevatar::os

#endif  // AEVATAR_OS_SECCOMP_POLICY_H_
