#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "os/precompiled_seccomp_policy.h"
#include "os/seccomp_policy.h"

namespace aevatar::os {
namespace {

// Loads the policy in a forked child and returns what the probe syscall
// reported: 0 on success, else errno; 255 if the child died.
int ErrnoUnderPolicy(const SeccompProgram& program, long (*probe)()) {
  pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(254);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program.program(), 0, 0) != 0) _exit(253);
    long rc = probe();
    _exit(rc == 0 ? 0 : errno);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

TEST(SeccompProgram, BuildsANonEmptyProgram) {
  auto program = BuildSandboxSeccompPolicy();
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_GT(program->program()->len, 10);
}

TEST(SeccompProgram, DeniesKernelSurfaceWithEperm) {
  auto program = BuildSandboxSeccompPolicy();
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(
      ErrnoUnderPolicy(*program, [] { return long{mount("none", "/mnt", "tmpfs", 0, nullptr)}; }),
      EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return long{unshare(CLONE_NEWUSER)}; }), EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return syscall(SYS_bpf, 0, 0, 0); }), EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return syscall(SYS_keyctl, 0, 0, 0); }), EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return syscall(SYS_io_uring_setup, 1, nullptr); }),
            EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return syscall(SYS_clone3, nullptr, 0); }), ENOSYS);
}

TEST(SeccompProgram, DeniesCloneWithNamespaceFlagsButAllowsPlainFork) {
  auto program = BuildSandboxSeccompPolicy();
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(ErrnoUnderPolicy(*program,
                             [] { return syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0); }),
            EPERM);
  EXPECT_EQ(ErrnoUnderPolicy(*program,
                             [] {
                               long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
                               if (pid == 0) _exit(0);
                               if (pid < 0) return pid;
                               waitpid(static_cast<pid_t>(pid), nullptr, 0);
                               return 0L;
                             }),
            0);
}

TEST(SeccompProgram, AllowsOrdinarySyscalls) {
  auto program = BuildSandboxSeccompPolicy();
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(ErrnoUnderPolicy(*program, [] { return long{getpid() > 0 ? 0 : -1}; }), 0);
}

// The engine loads the build-time copy; it must be the policy above, byte
// for byte (a stale copy would silently weaken or break every run).
TEST(SeccompProgram, PrecompiledPolicyIsTheBuiltOne) {
  auto built = BuildSandboxSeccompPolicy();
  ASSERT_TRUE(built.ok());
  const SeccompProgram precompiled = PrecompiledSandboxPolicy();
  ASSERT_EQ(precompiled.filters().size(), built->filters().size());
  for (size_t i = 0; i < built->filters().size(); ++i) {
    const sock_filter& a = precompiled.filters()[i];
    const sock_filter& b = built->filters()[i];
    EXPECT_TRUE(a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k) << "at " << i;
  }
  EXPECT_EQ(ErrnoUnderPolicy(precompiled, [] { return syscall(SYS_bpf, 0, 0, 0); }), EPERM);
}

}  // namespace
}  // namespace aevatar::os
