// The doctor's host probes: each reports what the kernel said, and a probe
// that changes process state does so in a child, never in the caller.
#include "os/host_probe.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>

#include <chrono>

#include "gtest/gtest.h"
#include "os/precompiled_seccomp_policy.h"

namespace aevatar::os {
namespace {

TEST(HostProbe, UnshareOfEachSandboxNamespaceWorksAsRoot) {
  for (int flag :
       {CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    EXPECT_TRUE(ProbeUnshare(flag).ok()) << flag << ": " << ProbeUnshare(flag);
  }
}

TEST(HostProbe, UnshareReportsTheKernelsError) {
  // CSIGNAL bits are not an unshare flag: EINVAL.
  const absl::Status status = ProbeUnshare(0x11);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("unshare: Invalid argument"), std::string::npos) << status;
}

TEST(HostProbe, SeccompPolicyInstallsInAChildOnly) {
  const SeccompProgram policy = PrecompiledSandboxPolicy();
  EXPECT_TRUE(ProbeSeccompFilter(policy.program()).ok());
  EXPECT_TRUE(ProbeNoNewPrivs().ok());
  // The caller itself is untouched.
  EXPECT_EQ(::prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
  EXPECT_EQ(::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
}

TEST(HostProbe, SeccompFailuresAreReported) {
  sock_fprog empty{0, nullptr};
  EXPECT_FALSE(ProbeSeccompFilter(&empty).ok());
  // A filter that kills everything kills the probe child: a failure too.
  sock_filter kill_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)};
  sock_fprog killer{1, kill_all};
  const absl::Status status = ProbeSeccompFilter(&killer);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("killed by signal"), std::string::npos) << status;
}

TEST(HostProbe, FreeDiskBytes) {
  auto free_root = FreeDiskBytes("/");
  ASSERT_TRUE(free_root.ok()) << free_root.status();
  EXPECT_GT(*free_root, 0u);
  EXPECT_FALSE(FreeDiskBytes("/nonexistent/doctor").ok());
}

TEST(HostProbe, CaptureProgramOutput) {
  constexpr auto kTimeout = std::chrono::seconds(10);
  auto echoed = CaptureProgramOutput({"/bin/echo", "hi"}, kTimeout);
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(*echoed, "hi\n");
  EXPECT_FALSE(CaptureProgramOutput({"/bin/false"}, kTimeout).ok());
  EXPECT_FALSE(CaptureProgramOutput({"/nonexistent/program"}, kTimeout).ok());
  auto slow = CaptureProgramOutput({"/bin/sleep", "30"}, std::chrono::milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(slow.status())) << slow.status();
}

}  // namespace
}  // namespace aevatar::os
