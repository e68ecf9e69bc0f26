// The exec'd sandbox init refuses a hand-off that would start a program
// outside a cgroup or in the network namespace it was cloned in (it fails
// closed with "receive the hand-off" on the error pipe, and runs nothing).
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <array>

#include "gtest/gtest.h"
#include "os/child_handoff.h"
#include "os/init_image.h"
#include "os/init_spawn.h"
#include "os/precompiled_seccomp_policy.h"

namespace aevatar::os {
namespace {

struct InitOutcome {
  bool reported_failure = false;
  ChildFailure failure{};
  bool reported_exit = false;
};

// Spawns the real chrono-sandbox-init with a minimal plan (an empty root,
// one stage that would print "ran"), sends `procs_fds`/`netns_fd` as the
// hand-off and collects what the init reported.
InitOutcome RunInitWithHandoff(bool netns_from_handoff, std::span<const int> procs_fds,
                               int netns_fd) {
  const SeccompProgram seccomp = PrecompiledSandboxPolicy();
  char arg0[] = "/bin/echo", arg1[] = "ran";
  char* argv[] = {arg0, arg1, nullptr};
  char* envp[] = {nullptr};
  const ChildStage stage{"/bin/echo", argv, envp};
  ChildPlan plan{};
  plan.root_mount_point = "/tmp";
  plan.root_mount_options = "size=1m,mode=0755";
  plan.old_root_name = ".oldroot";
  plan.hostname = "sandbox";
  plan.workdir = "/";
  plan.uid = 65534;
  plan.gid = 65534;
  plan.stages = &stage;
  plan.stage_count = 1;
  plan.seccomp = seccomp.program();
  plan.unshare_cgroup = false;
  plan.netns_from_handoff = netns_from_handoff;

  auto image = MakeMemfdWithContents("plan", WriteInitImage(plan));
  auto out = MakePipe(), error = MakePipe(), status = MakePipe();
  auto handoff = MakeHandoffChannel();
  auto stdin_fd = MakeMemfdWithContents("stdin", "");
  EXPECT_TRUE(image.ok() && out.ok() && error.ok() && status.ok() && handoff.ok() && stdin_fd.ok());
  auto init_path = DefaultInitExecutablePath();
  EXPECT_TRUE(init_path.ok());
  auto init_exe = OpenInitExecutable(*init_path);
  EXPECT_TRUE(init_exe.ok()) << init_exe.status();
  InitOutcome outcome;
  if (!init_exe.ok()) return outcome;
  // Without CLONE_NEWNET when the namespace is to come in the hand-off.
  const int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                    (netns_from_handoff ? 0 : CLONE_NEWNET);
  auto child =
      SpawnSandboxInit(flags, init_exe->get(),
                       {image->get(), stdin_fd->get(), out->write_end.get(), out->write_end.get(),
                        error->write_end.get(), status->write_end.get(), handoff->child_end.get()});
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return outcome;
  out->write_end.reset();
  error->write_end.reset();
  status->write_end.reset();
  handoff->child_end.reset();
  EXPECT_TRUE(SendHandoff(handoff->parent_end.get(), procs_fds, netns_fd).ok());
  EXPECT_TRUE(child->Wait().ok());
  outcome.reported_failure = ::read(error->read_end.get(), &outcome.failure,
                                    sizeof(outcome.failure)) == sizeof(outcome.failure);
  ChildExitReport report{};
  outcome.reported_exit = ::read(status->read_end.get(), &report, sizeof(report)) > 0;
  char buf[16];
  EXPECT_EQ(::read(out->read_end.get(), buf, sizeof(buf)), 0) << "the stage ran";
  return outcome;
}

TEST(InitHandoff, RefusesAHandOffWithoutACgroup) {
  InitOutcome outcome = RunInitWithHandoff(false, {}, -1);
  ASSERT_TRUE(outcome.reported_failure);
  EXPECT_EQ(outcome.failure.step, ChildStep::kHandoff);
  EXPECT_EQ(outcome.failure.err, EPROTO);
  EXPECT_FALSE(outcome.reported_exit);
}

TEST(InitHandoff, RefusesAHandOffWithoutTheExpectedNetworkNamespace) {
  // Any writable descriptor stands in for a cgroup.procs file here: the
  // check comes before the join.
  const int stand_in = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(stand_in, 0);
  const int procs[] = {stand_in};
  InitOutcome outcome = RunInitWithHandoff(true, procs, -1);
  ::close(stand_in);
  ASSERT_TRUE(outcome.reported_failure);
  EXPECT_EQ(outcome.failure.step, ChildStep::kHandoff);
  EXPECT_EQ(outcome.failure.err, EPROTO);
  EXPECT_FALSE(outcome.reported_exit);
}

}  // namespace
}  // namespace aevatar::os
