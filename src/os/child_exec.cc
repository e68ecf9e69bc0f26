// DANGER: this is the sandbox init, root in the run's namespaces until its
// programs drop privileges. Compiled into chrono-sandbox-init only, a
// static executable without a C library (init/freestanding_libc.cc gives it
// the few calls below as raw syscalls; no malloc, no locks, no exceptions,
// no std::string). Its plan arrives as an image (init_image.h). Failures are
// reported as a fixed-size ChildFailure on plan.error_fd, then the process
// calls _exit.
//
// Process tree of one run:
//
//   service thread ──clone(VM|VFORK|NEW{NS,PID,IPC,UTS}) + execve──► chrono-sandbox-init (pid 1)
//     (init_spawn.cc: only the plan's descriptors, at 3..9)           │ builds the rootfs, pivots
//   hand-off: cgroup.procs fds, netns fd (SCM_RIGHTS) ──────────────► │ joins the cgroup and netns
//                                                                     └─vfork─► stage program
//                                                                               hardens itself,
//                                                                               execve
//
// The init stays root inside its namespaces, non-dumpable, and outlives each
// stage only to reap it; when it exits the kernel kills everything left in the
// pid namespace, so nothing a program daemonised survives the run.

#include "os/child_exec.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aevatar::os {
namespace {

[[noreturn]] void Fail(const ChildPlan& plan, ChildStep step, int err, int index = 0) {
  ChildFailure failure{step, err, index};
  // Best effort: if the parent is gone there is nobody to tell.
  [[maybe_unused]] ssize_t n = ::write(plan.error_fd, &failure, sizeof(failure));
  ::_exit(127);
}

bool WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Returns 0 or an errno.
int RunFsStep(const FsStep& step) {
  switch (step.kind) {
    case FsStep::Kind::kMkdir:
      return ::mkdir(step.path, step.mode) == 0 || errno == EEXIST ? 0 : errno;
    case FsStep::Kind::kMount:
      return ::mount(step.source, step.path, step.fstype, step.flags, step.data) == 0 ? 0 : errno;
    case FsStep::Kind::kBindRo:
      if (::mount(step.source, step.path, nullptr, MS_BIND, nullptr) != 0) return errno;
      return ::mount(nullptr, step.path, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | step.flags,
                     nullptr) == 0
                 ? 0
                 : errno;
    case FsStep::Kind::kSymlink:
      return ::symlink(step.source, step.path) == 0 ? 0 : errno;
    case FsStep::Kind::kCharDevice:  // exactly `mode`: BuildFilesystem runs with umask 0
      return ::mknod(step.path, S_IFCHR | step.mode, static_cast<dev_t>(step.flags)) == 0 ? 0
                                                                                          : errno;
    case FsStep::Kind::kWriteFile:
    case FsStep::Kind::kTouch: {
      int fd = ::open(step.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, step.mode);
      if (fd < 0) return errno;
      bool ok = step.kind == FsStep::Kind::kTouch || WriteAll(fd, step.data, step.data_len);
      int err = ok ? 0 : errno;
      ::close(fd);
      return err;
    }
  }
  return EINVAL;
}

int BringLoopbackUp() {
  int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return errno;
  struct ifreq ifr;
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, "lo", 3);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  int err = ::ioctl(sock, SIOCSIFFLAGS, &ifr) == 0 ? 0 : errno;
  ::close(sock);
  return err;
}

// Builds the new root and pivots into it: rootfs steps, then pivot_root and a
// detached old root, then a read-only root.
void BuildFilesystem(const ChildPlan& plan) {
  // Every mode in the plan is exact; the service's umask must not narrow it.
  // Programs get the conventional 022 back afterwards.
  ::umask(0);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    Fail(plan, ChildStep::kMakePrivate, errno);
  }
  if (::mount("tmpfs", plan.root_mount_point, "tmpfs", MS_NOSUID | MS_NODEV,
              plan.root_mount_options) != 0) {
    Fail(plan, ChildStep::kRootMount, errno);
  }
  for (size_t i = 0; i < plan.fs_step_count; ++i) {
    int err = RunFsStep(plan.fs_steps[i]);
    if (err != 0) Fail(plan, ChildStep::kFsStep, err, static_cast<int>(i));
  }
  if (::chdir(plan.root_mount_point) != 0) Fail(plan, ChildStep::kPivotRoot, errno);
  if (::mkdir(plan.old_root_name, 0700) != 0) Fail(plan, ChildStep::kPivotRoot, errno);
  if (::syscall(SYS_pivot_root, ".", plan.old_root_name) != 0) {
    Fail(plan, ChildStep::kPivotRoot, errno);
  }
  if (::chdir("/") != 0) Fail(plan, ChildStep::kPivotRoot, errno);
  if (::umount2(plan.old_root_name, MNT_DETACH) != 0) Fail(plan, ChildStep::kUmountOldRoot, errno);
  if (::rmdir(plan.old_root_name) != 0) Fail(plan, ChildStep::kUmountOldRoot, errno);
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr) != 0) {
    Fail(plan, ChildStep::kRemountRootRo, errno);
  }
  ::umask(022);
}

// Blocks until the parent hands over the run's cgroup and network namespace
// (ChildHandoff), then joins both. EOF means the parent gave up on the run
// before it started; nobody is left to report to.
void JoinRunResources(ChildPlan& plan) {
  ChildHandoff header;
  iovec iov{&header, sizeof(header)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxHandoffFds)];
  msghdr message;
  std::memset(&message, 0, sizeof(message));
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(plan.handoff_fd, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n == 0) ::_exit(127);
  if (n < 0) Fail(plan, ChildStep::kHandoff, errno);
  const cmsghdr* cmsg = CMSG_FIRSTHDR(&message);
  const size_t count = size_t{header.cgroup_procs_count} + (header.has_netns != 0 ? 1 : 0);
  // Fail closed on anything but what this run needs: a program must never
  // start outside a cgroup or in the namespace the init was cloned in.
  const bool expected =
      header.cgroup_procs_count >= 1 && (header.has_netns != 0) == plan.netns_from_handoff;
  if (n != sizeof(header) || (message.msg_flags & MSG_CTRUNC) != 0 || !expected ||
      count > kMaxHandoffFds || cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(sizeof(int) * count)) {
    Fail(plan, ChildStep::kHandoff, EPROTO);
  }
  int fds[kMaxHandoffFds];
  std::memcpy(fds, CMSG_DATA(cmsg), sizeof(int) * count);
  ::close(plan.handoff_fd);
  plan.handoff_fd = -1;

  // Join the run's cgroup ("0" means the writing process) before anything
  // of the program exists, so all of it is counted against the limits.
  for (uint32_t i = 0; i < header.cgroup_procs_count; ++i) {
    if (::write(fds[i], "0", 1) != 1)
      Fail(plan, ChildStep::kJoinCgroup, errno, static_cast<int>(i));
    ::close(fds[i]);
  }
  if (plan.unshare_cgroup && ::unshare(CLONE_NEWCGROUP) != 0) {
    Fail(plan, ChildStep::kUnshareCgroup, errno);
  }
  if (header.has_netns != 0) {
    const int netns_fd = fds[header.cgroup_procs_count];
    if (::setns(netns_fd, CLONE_NEWNET) != 0) Fail(plan, ChildStep::kSetns, errno);
    ::close(netns_fd);
  }
}

// What the init gives up on behalf of its programs, which inherit it across
// vfork and execve: their resource limits, the capability bounding set (so
// no capability can ever come back) and no_new_privs (so execve of a setuid
// binary or one with file capabilities grants nothing). The init keeps its
// effective capabilities for what is left of its set-up (joining the cgroup
// and network namespace, loopback). Done while the parent prepares the
// hand-off, off the critical path.
void GiveUpPrivilegesForPrograms(const ChildPlan& plan) {
  for (size_t i = 0; i < plan.rlimit_count; ++i) {
    struct rlimit limit {
      plan.rlimits[i].soft, plan.rlimits[i].hard
    };
    if (::setrlimit(plan.rlimits[i].resource, &limit) != 0) {
      Fail(plan, ChildStep::kRlimit, errno, static_cast<int>(i));
    }
  }
  // Up to the largest number a capability set can hold, not CAP_LAST_CAP of
  // the headers this was built with: a newer kernel may know more (EINVAL
  // for the ones it does not).
  for (int cap = 0; cap < 64; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, static_cast<unsigned long>(cap), 0UL, 0UL, 0UL) != 0 &&
        errno != EINVAL) {
      Fail(plan, ChildStep::kCapBoundingSet, errno, cap);
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0)
    Fail(plan, ChildStep::kNoNewPrivs, errno);
}

// The program side: runs in the forked stage process and ends in execve.
// Containment checklist, in order; seccomp last (rlimits, the bounding set
// and no_new_privs come from the init: GiveUpPrivilegesForPrograms).
[[noreturn]] void ExecStage(const ChildPlan& plan, const ChildStage& stage, int index) {
  // 1. Own session, the run's stdio, everything else close-on-exec.
  if (::setsid() < 0) Fail(plan, ChildStep::kSetsid, errno, index);
  if (::dup2(plan.stdin_fd, 0) < 0 || ::dup2(plan.stdout_fd, 1) < 0 ||
      ::dup2(plan.stderr_fd, 2) < 0) {
    Fail(plan, ChildStep::kDup, errno, index);
  }
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    Fail(plan, ChildStep::kDup, errno, index);
  }
  if (::chdir(plan.workdir) != 0) Fail(plan, ChildStep::kChdir, errno, index);
  // 2. Leave root (setuid from 0 clears the permitted, effective and ambient
  //    capability sets; the init emptied the bounding set, so none can come
  //    back, and set no_new_privs, so execve grants nothing either).
  //    Raw syscalls: the kernel calls change only this process, which is
  //    all there is to change (the init has no C library to keep in step).
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) Fail(plan, ChildStep::kSetgroups, errno, index);
  if (::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0) {
    Fail(plan, ChildStep::kSetgid, errno, index);
  }
  if (::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0) {
    Fail(plan, ChildStep::kSetuid, errno, index);
  }
  //    Leaving root made the memory this vfork child shares with the init
  //    dumpable again (fs.suid_dumpable): a leftover process of the same uid
  //    could open its /proc/<pid>/mem until execve. And the inheritable set
  //    survives setuid: empty it too.
  if (::prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) != 0) Fail(plan, ChildStep::kPrctl, errno);
  __user_cap_header_struct cap_header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct no_caps[2] = {};
  if (::syscall(SYS_capset, &cap_header, no_caps) != 0) Fail(plan, ChildStep::kCapset, errno);
  // 3. seccomp last: from here on the filter applies to every syscall.
  if (::prctl(PR_SET_SECCOMP, static_cast<unsigned long>(SECCOMP_MODE_FILTER), plan.seccomp, 0UL,
              0UL) != 0) {
    Fail(plan, ChildStep::kSeccomp, errno, index);
  }
  ::execve(stage.path, stage.argv, stage.envp);
  Fail(plan, ChildStep::kExec, errno, index);
}

// Restores default dispositions and an empty mask: the service thread's
// ignored or blocked signals must not leak into the program.
void ResetSignals(const ChildPlan& plan) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &action, nullptr);  // EINVAL for glibc-reserved ones is fine
  }
  sigset_t empty;
  sigemptyset(&empty);
  if (::sigprocmask(SIG_SETMASK, &empty, nullptr) != 0) Fail(plan, ChildStep::kSignals, errno);
}

// Runs one stage and reaps every process until that stage's program exits.
ChildExitReport RunStage(const ChildPlan& plan, int index) {
  // vfork: the program shares the init's memory until its execve, so the
  // init's (large, service-sized) address space is not copied. Safe here
  // because ExecStage never returns, changes only per-task state (fds, creds,
  // rlimits, seccomp) and ends in execve or _exit, while the init waits.
  pid_t pid = ::vfork();
  if (pid < 0) Fail(plan, ChildStep::kFork, errno, index);
  if (pid == 0) ExecStage(plan, plan.stages[index], index);
  // The last program has its own stdin now. The init keeps no reader of it:
  // a pipe's writer (a warm sandbox's engine) must get EPIPE once that
  // program is gone, not fill a pipe nobody will read.
  if (static_cast<size_t>(index) + 1 == plan.stage_count) ::close(plan.stdin_fd);
  ChildExitReport report;
  std::memset(&report, 0, sizeof(report));
  report.stage_index = index;
  for (;;) {
    int status = 0;
    struct rusage usage;
    pid_t reaped = ::wait4(-1, &status, 0, &usage);
    if (reaped < 0) {
      if (errno == EINTR) continue;
      Fail(plan, ChildStep::kWait, errno, index);
    }
    if (reaped == pid) {
      report.wait_status = status;
      report.usage = usage;
      return report;
    }
  }
}

}  // namespace

[[noreturn]] void RunSandboxInit(const ChildPlan& shared_plan) {
  ChildPlan plan = shared_plan;  // a plain struct copy: no allocation
  // A plan that would run a program as root or without seccomp is refused.
  if (plan.uid == 0 || plan.gid == 0 || plan.seccomp == nullptr || plan.seccomp->len == 0) {
    Fail(plan, ChildStep::kPlan, EINVAL);
  }
  // It dies with the service thread that started it: the spawner set
  // PR_SET_PDEATHSIG before the exec (init_spawn.cc), which execve keeps.
  // Keep /proc/1 unreadable.
  if (::prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) != 0) Fail(plan, ChildStep::kPrctl, errno);
  ResetSignals(plan);

  // The filesystem first: the parent claims the cgroup and waits for the
  // network namespace meanwhile (see child_handoff.h).
  BuildFilesystem(plan);
  if (::sethostname(plan.hostname, std::strlen(plan.hostname)) != 0) {
    Fail(plan, ChildStep::kSethostname, errno);
  }
  GiveUpPrivilegesForPrograms(plan);
  JoinRunResources(plan);
  if (plan.loopback_up) {
    int err = BringLoopbackUp();
    if (err != 0) Fail(plan, ChildStep::kLoopbackUp, err);
  }

  ChildExitReport report;
  std::memset(&report, 0, sizeof(report));
  for (size_t i = 0; i < plan.stage_count; ++i) {
    report = RunStage(plan, static_cast<int>(i));
    // Nothing a stage left running may live on into the next one.
    ::kill(-1, SIGKILL);
    if (!WIFEXITED(report.wait_status) || WEXITSTATUS(report.wait_status) != 0) break;
  }
  WriteAll(plan.status_fd, reinterpret_cast<const char*>(&report), sizeof(report));
  ::_exit(0);
}

}  // namespace aevatar::os
