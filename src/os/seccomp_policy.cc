#include "os/seccomp_policy.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "os/unique_fd.h"

namespace aevatar::os {
namespace {

// Syscalls a sandboxed program may not make; each fails with EPERM.
constexpr const char* kDeniedSyscalls[] = {
    // filesystem namespace and mounts
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    // other namespaces
    "unshare",
    "setns",
    // debugging and introspection of other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    // kernel programmability and tracing
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "lookup_dcookie",
    // kernel keyring
    "keyctl",
    "add_key",
    "request_key",
    // kernel images and modules
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    // file handles bypass path permissions
    "open_by_handle_at",
    "name_to_handle_at",
    // clocks, time and the machine
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "vhangup",
    "iopl",
    "ioperm",
    "sethostname",
    "setdomainname",
};

// clone flags that create namespaces; clone with any of them is denied.
constexpr uint64_t kNamespaceCloneFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
                                          CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                          CLONE_NEWNET | CLONE_NEWTIME;

struct CtxDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};

absl::Status Check(int rc, const char* what) {
  if (rc < 0) return absl::InternalError(absl::StrCat("seccomp ", what, ": error ", -rc));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SeccompProgram> BuildSandboxSeccompPolicy() {
  std::unique_ptr<void, CtxDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return absl::InternalError("seccomp_init failed");
  // Only the native architecture; x32 and i386 entry points are not filtered
  // by name, so a syscall through them kills the process.
  if (auto st = Check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS),
                      "badarch");
      !st.ok()) {
    return st;
  }
  // A binary tree of syscall numbers instead of a linear chain: the kernel
  // evaluates the filter for every syscall number when it is loaded (to
  // cache the always-allowed ones), and a chain made that cost ~70 us per run.
  if (auto st = Check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2), "optimize");
      !st.ok()) {
    return st;
  }
  for (const char* name : kDeniedSyscalls) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this kernel/arch
    if (auto st = Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0), name);
        !st.ok()) {
      return st;
    }
  }
  // One rule per flag: libseccomp has no "masked not-equal" comparison.
  for (uint64_t flag = 1; flag != 0 && flag <= kNamespaceCloneFlags; flag <<= 1) {
    if ((flag & kNamespaceCloneFlags) == 0) continue;
    if (auto st = Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                         SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
                        "clone");
        !st.ok()) {
      return st;
    }
  }
  if (auto st =
          Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3");
      !st.ok()) {
    return st;
  }
  // libseccomp 2.5 exports only to an fd; a memfd keeps it off the disk.
  auto memfd = MakeMemfdWithContents("seccomp-bpf", "");
  if (!memfd.ok()) return memfd.status();
  if (auto st = Check(seccomp_export_bpf(ctx.get(), memfd->get()), "export"); !st.ok()) return st;
  off_t size = ::lseek(memfd->get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) {
    return absl::InternalError("seccomp export produced no program");
  }
  std::vector<sock_filter> filters(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(memfd->get(), filters.data(), static_cast<size_t>(size), 0) != size) {
    return absl::InternalError("seccomp export could not be read back");
  }
  return SeccompProgram::FromFilters(std::move(filters));
}

}  // namespace aevatar::os
