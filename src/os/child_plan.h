#ifndef AEVATAR_OS_CHILD_PLAN_H_
#define AEVATAR_OS_CHILD_PLAN_H_

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace aevatar::os {

// Everything the sandbox init (chrono-sandbox-init) needs, built completely
// by the engine: plain structs the init only reads before making syscalls.
// The engine copies a plan into an image (init_image.h) for the exec'd init;
// the pointers must stay valid until WriteInitImage has run.

// One filesystem step, run inside the new mount namespace before pivot_root.
// Paths are absolute on the host side of the pivot (under the new root's mount
// point).
struct FsStep {
  enum class Kind : uint8_t {
    kMkdir,       // mkdir(path, mode)
    kMount,       // mount(source, path, fstype, flags, data)
    kBindRo,      // bind source onto path, then remount read-only with flags
    kSymlink,     // symlink(source, path)
    kWriteFile,   // create path with mode, write data[0..data_len)
    kTouch,       // create an empty file at path (a bind target)
    kCharDevice,  // mknod a character device (flags = its dev_t) with exactly `mode`
  };
  Kind kind;
  const char* path = nullptr;
  const char* source = nullptr;
  const char* fstype = nullptr;
  unsigned long flags = 0;
  const char* data = nullptr;
  size_t data_len = 0;
  unsigned mode = 0755;
};

struct ChildRlimit {
  int resource;
  rlim_t soft;
  rlim_t hard;
};

// One program the sandbox init runs; stages run in order and the run stops at
// the first stage that does not exit 0 (e.g. a TypeScript compile error).
struct ChildStage {
  const char* path;
  char* const* argv;
  char* const* envp;
};

struct ChildPlan {
  // The empty directory the new root tmpfs is mounted on, and where the old
  // root is parked during pivot_root (relative to the new root).
  const char* root_mount_point;
  const char* root_mount_options;
  const char* old_root_name;  // e.g. ".oldroot"
  const FsStep* fs_steps;
  size_t fs_step_count;
  const char* hostname;
  const char* workdir;  // inside the new root
  uid_t uid;
  gid_t gid;
  const ChildRlimit* rlimits;
  size_t rlimit_count;
  const ChildStage* stages;
  size_t stage_count;
  const sock_fprog* seccomp;  // required
  bool unshare_cgroup;        // enter a cgroup namespace once attached
  bool loopback_up;           // bring up lo in the (empty) network namespace
  // The network namespace comes in the hand-off (the clone made none); the
  // init refuses a hand-off without one.
  bool netns_from_handoff;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  int error_fd;    // write end; receives a ChildFailure when setup fails
  int status_fd;   // write end; receives a ChildExitReport when the run ends
  int handoff_fd;  // the init's end of the hand-off channel (child_handoff.h)
};

// The hand-off message (os/child_handoff.h), sent once the init may start
// the program. Its descriptors ride in SCM_RIGHTS, in this order: the run
// cgroup's cgroup.procs files (the init writes "0" to each to join it), then
// a prepared network namespace (loopback up) to setns into, if any.
struct ChildHandoff {
  uint32_t cgroup_procs_count;
  uint32_t has_netns;
};
inline constexpr size_t kMaxHandoffFds = 8;

// Which setup step failed; sent with errno on the error pipe.
enum class ChildStep : int32_t {
  kJoinCgroup = 1,
  kPrctl,
  kUnshareCgroup,
  kMakePrivate,
  kRootMount,
  kFsStep,
  kPivotRoot,
  kUmountOldRoot,
  kRemountRootRo,
  kSethostname,
  kLoopbackUp,
  kSetns,
  kFork,
  kSignals,
  kSetsid,
  kDup,
  kChdir,
  kRlimit,
  kCapBoundingSet,
  kSetgroups,
  kSetgid,
  kSetuid,
  kNoNewPrivs,
  kSeccomp,
  kExec,
  kWait,
  kHandoff,
  kCapset,
  kPlan,
};

struct ChildFailure {
  ChildStep step;
  int32_t err;    // errno
  int32_t index;  // fs step or stage index, when it applies
};

struct ChildExitReport {
  int32_t wait_status;  // of the last stage that ran
  int32_t stage_index;
  struct rusage usage;  // of that stage and its reaped descendants
};

// Returns a short name for `step`, e.g. "pivot_root".
const char* ChildStepName(ChildStep step);

// Returns what `failure` says in words, naming the path (or name) the failed
// step worked on as `plan` gives it, e.g.
//   "rootfs step 4: bind /usr onto /tmp/usr: No such file or directory".
// For the engine, after the init reported; never called after fork.
std::string DescribeChildFailure(const ChildPlan& plan, const ChildFailure& failure);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_CHILD_PLAN_H_
