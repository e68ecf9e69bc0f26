// Internal to the native backend (native_backend.cc, native_warm.cc): what
// one run's init is told and what the engine keeps of a started init.
#ifndef AEVATAR_SANDBOX_NATIVE_RUN_PARTS_H_
#define AEVATAR_SANDBOX_NATIVE_RUN_PARTS_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "os/cgroup.h"
#include "os/cgroup_pool.h"
#include "os/child_plan.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "sandbox/native_backend.h"
#include "sandbox/rootfs_plan.h"

namespace aevatar::sandbox {

// Types the NativeBackend's nested classes hold: named, not anonymous, so
// those classes' linkage stays external (GCC's -Wsubobject-linkage).
namespace native_internal {

// argv/envp as the NULL-terminated char* arrays execve wants; points into the
// owning strings, which must outlive it.
struct CArgv {
  explicit CArgv(const std::vector<std::string>& items) {
    for (const auto& item : items) ptrs.push_back(const_cast<char*>(item.c_str()));
    ptrs.push_back(nullptr);
  }
  std::vector<char*> ptrs;
};

// A run cgroup taken from the pool, given back when this goes.
class LeasedCgroup {
 public:
  LeasedCgroup(os::CgroupPool* pool, std::unique_ptr<os::RunCgroup> cgroup)
      : pool_(pool), cgroup_(std::move(cgroup)) {}
  LeasedCgroup(LeasedCgroup&& other) = default;
  LeasedCgroup& operator=(LeasedCgroup&&) = delete;
  ~LeasedCgroup() {
    if (cgroup_) pool_->GiveBack(std::move(cgroup_));
  }
  os::RunCgroup& operator*() const { return *cgroup_; }
  os::RunCgroup* operator->() const { return cgroup_.get(); }

 private:
  os::CgroupPool* pool_;
  std::unique_ptr<os::RunCgroup> cgroup_;
};

}  // namespace native_internal

// Everything the init is told, built before the clone: the rootfs steps,
// rlimits and argv/envp arrays, and the plan that points into them (so an
// InitPlan stays where it was made).
class NativeBackend::InitPlan {
 public:
  InitPlan(const PreparedRun& run, const os::SeccompProgram& seccomp, bool handed_netns);
  InitPlan(const InitPlan&) = delete;
  InitPlan& operator=(const InitPlan&) = delete;

  const os::ChildPlan& plan() const { return plan_; }
  int cpu_limit_secs() const { return static_cast<int>(rlimits_[0].soft); }  // RLIMIT_CPU

 private:
  const RootfsPlan rootfs_;
  const std::vector<os::ChildRlimit> rlimits_;
  const native_internal::CArgv envp_;
  std::vector<native_internal::CArgv> argvs_;
  std::vector<os::ChildStage> stages_;
  os::ChildPlan plan_{};
};

// A started init and what the engine keeps of it until the run is collected.
// The cgroup comes first so that it is given back after the init is gone
// (members are destroyed in reverse order); on an error the init is killed
// (ChildProcess) before the cgroup goes back.
struct NativeBackend::StartedRun {
  native_internal::LeasedCgroup cgroup;
  os::CgroupUsage baseline;                // a recycled cgroup's counters run on
  os::UniqueFd out, err, failure, status;  // read ends
  os::ChildProcess child;
  std::chrono::steady_clock::time_point started;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_NATIVE_RUN_PARTS_H_
