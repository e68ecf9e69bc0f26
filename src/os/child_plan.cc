#include "os/child_plan.h"

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

}  // namespace aevatar::os
