#include "os/child_plan.h"

#include <cstring>
#include <string>

namespace aevatar::os {

const char* ChildStepName(ChildStep step) {
  switch (step) {
    case ChildStep::kJoinCgroup:
      return "join the run cgroup";
    case ChildStep::kPrctl:
      return "prctl";
    case ChildStep::kUnshareCgroup:
      return "unshare cgroup namespace";
    case ChildStep::kMakePrivate:
      return "make mounts private";
    case ChildStep::kRootMount:
      return "mount root tmpfs";
    case ChildStep::kFsStep:
      return "rootfs step";
    case ChildStep::kPivotRoot:
      return "pivot_root";
    case ChildStep::kUmountOldRoot:
      return "detach old root";
    case ChildStep::kRemountRootRo:
      return "remount root read-only";
    case ChildStep::kSethostname:
      return "sethostname";
    case ChildStep::kLoopbackUp:
      return "bring up loopback";
    case ChildStep::kSetns:
      return "join network namespace";
    case ChildStep::kFork:
      return "fork stage";
    case ChildStep::kSignals:
      return "reset signals";
    case ChildStep::kSetsid:
      return "setsid";
    case ChildStep::kDup:
      return "set up stdio";
    case ChildStep::kChdir:
      return "chdir workdir";
    case ChildStep::kRlimit:
      return "setrlimit";
    case ChildStep::kCapBoundingSet:
      return "drop capability bounding set";
    case ChildStep::kSetgroups:
      return "setgroups";
    case ChildStep::kSetgid:
      return "setresgid";
    case ChildStep::kSetuid:
      return "setresuid";
    case ChildStep::kNoNewPrivs:
      return "no_new_privs";
    case ChildStep::kSeccomp:
      return "load seccomp filter";
    case ChildStep::kExec:
      return "execve";
    case ChildStep::kWait:
      return "wait for stage";
    case ChildStep::kHandoff:
      return "receive the hand-off";
    case ChildStep::kCapset:
      return "clear the inheritable capabilities";
    case ChildStep::kPlan:
      return "read the plan";
  }
  return "unknown step";
}

namespace {

std::string Text(const char* text) { return text ? text : "(none)"; }

// The step of the plan's filesystem list, as "<what> <path>".
std::string DescribeFsStep(const FsStep& step) {
  switch (step.kind) {
    case FsStep::Kind::kMkdir:
      return "mkdir " + Text(step.path);
    case FsStep::Kind::kMount:
      return "mount " + Text(step.fstype) + " at " + Text(step.path);
    case FsStep::Kind::kBindRo:
      return "bind " + Text(step.source) + " onto " + Text(step.path);
    case FsStep::Kind::kSymlink:
      return "symlink " + Text(step.path) + " -> " + Text(step.source);
    case FsStep::Kind::kWriteFile:
      return "write " + Text(step.path);
    case FsStep::Kind::kTouch:
      return "create " + Text(step.path);
    case FsStep::Kind::kCharDevice:
      return "mknod " + Text(step.path);
  }
  return "step at " + Text(step.path);
}

// What the failed step worked on, or "" when the plan does not name it.
std::string Subject(const ChildPlan& plan, const ChildFailure& failure) {
  const auto index = static_cast<size_t>(failure.index);
  const bool stage = failure.index >= 0 && index < plan.stage_count && plan.stages != nullptr;
  switch (failure.step) {
    case ChildStep::kFsStep:
      if (failure.index >= 0 && index < plan.fs_step_count && plan.fs_steps != nullptr) {
        return DescribeFsStep(plan.fs_steps[index]);
      }
      return "";
    case ChildStep::kRootMount:
    case ChildStep::kPivotRoot:
      return Text(plan.root_mount_point);
    case ChildStep::kUmountOldRoot:
      return Text(plan.old_root_name);
    case ChildStep::kSethostname:
      return Text(plan.hostname);
    case ChildStep::kChdir:
      return Text(plan.workdir);
    case ChildStep::kExec:
      return stage ? Text(plan.stages[index].path) : "";
    case ChildStep::kRlimit:
      if (failure.index >= 0 && index < plan.rlimit_count && plan.rlimits != nullptr) {
        return "resource " + std::to_string(plan.rlimits[index].resource);
      }
      return "";
    default:
      return "";
  }
}

}  // namespace

std::string DescribeChildFailure(const ChildPlan& plan, const ChildFailure& failure) {
  std::string text = ChildStepName(failure.step);
  if (failure.step == ChildStep::kFsStep || failure.step == ChildStep::kJoinCgroup ||
      failure.step == ChildStep::kRlimit || failure.step == ChildStep::kCapBoundingSet) {
    text += " " + std::to_string(failure.index);
  } else if (failure.index > 0) {
    text += " (stage " + std::to_string(failure.index) + ")";
  }
  if (std::string subject = Subject(plan, failure); !subject.empty()) text += ": " + subject;
  return text + ": " + std::strerror(failure.err);
}

}  // namespace aevatar::os
