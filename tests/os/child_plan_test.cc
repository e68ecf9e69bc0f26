#include "os/child_plan.h"

#include <cerrno>
#include <string>

#include "gtest/gtest.h"

namespace aevatar::os {
namespace {

// A plan with one step of each kind that names a path.
struct SamplePlan {
  SamplePlan() {
    plan.root_mount_point = "/tmp";
    plan.old_root_name = ".oldroot";
    plan.hostname = "sandbox";
    plan.workdir = "/workspace";
    plan.fs_steps = steps;
    plan.fs_step_count = 3;
    plan.stages = stages;
    plan.stage_count = 2;
    plan.rlimits = rlimits;
    plan.rlimit_count = 1;
  }
  FsStep steps[3] = {
      {.kind = FsStep::Kind::kMkdir, .path = "/tmp/usr"},
      {.kind = FsStep::Kind::kBindRo, .path = "/tmp/usr", .source = "/usr"},
      {.kind = FsStep::Kind::kMount, .path = "/tmp/proc", .fstype = "proc"},
  };
  ChildStage stages[2] = {{"/usr/bin/tsc", nullptr, nullptr}, {"/usr/bin/node", nullptr, nullptr}};
  ChildRlimit rlimits[1] = {{RLIMIT_CPU, 1, 2}};
  ChildPlan plan{};
};

TEST(DescribeChildFailure, AFailedRootfsStepNamesItsPaths) {
  SamplePlan sample;
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kFsStep, ENOENT, 1}),
            "rootfs step 1: bind /usr onto /tmp/usr: No such file or directory");
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kFsStep, EPERM, 2}),
            "rootfs step 2: mount proc at /tmp/proc: Operation not permitted");
}

TEST(DescribeChildFailure, StepsOnThePlansOwnPathsNameThem) {
  SamplePlan sample;
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kPivotRoot, EINVAL, 0}),
            "pivot_root: /tmp: Invalid argument");
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kChdir, ENOENT, 0}),
            "chdir workdir: /workspace: No such file or directory");
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kExec, EACCES, 1}),
            "execve (stage 1): /usr/bin/node: Permission denied");
}

TEST(DescribeChildFailure, AnIndexOutsideThePlanIsReportedWithoutAPath) {
  SamplePlan sample;
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kFsStep, EIO, 7}),
            "rootfs step 7: Input/output error");
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kFsStep, EIO, -1}),
            "rootfs step -1: Input/output error");
  EXPECT_EQ(DescribeChildFailure(sample.plan, {ChildStep::kSeccomp, EINVAL, 0}),
            "load seccomp filter: Invalid argument");
}

}  // namespace
}  // namespace aevatar::os
