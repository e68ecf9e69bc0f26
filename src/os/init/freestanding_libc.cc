// The few libc functions the sandbox init (child_exec.cc) calls, as raw
// x86-64 Linux syscalls, so that chrono-sandbox-init links without glibc.
// Why: glibc's start-up probes the CPU with CPUID, which traps on a
// virtualised host; here a static glibc binary took 0.41 ms to start and
// exit against 0.11 ms without. The init is exec'd once per run.
//
// The declarations come from glibc's headers (the init's code is ordinary
// C++ against them); only the definitions are ours. errno is a plain
// global: the init is single-threaded.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int g_errno = 0;

long RawSyscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}

// The libc convention: -1 and errno on failure.
long Check(long ret) {
  if (ret < 0 && ret > -4096) {
    g_errno = static_cast<int>(-ret);
    return -1;
  }
  return ret;
}

long Sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  return Check(RawSyscall(n, a, b, c, d, e, f));
}

// The kernel's struct sigaction for rt_sigaction (not glibc's layout).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};

}  // namespace

extern "C" {

int* __errno_location() { return &g_errno; }

void* memset(void* dest, int c, size_t n) {
  auto* p = static_cast<unsigned char*>(dest);
  while (n-- > 0) *p++ = static_cast<unsigned char>(c);
  return dest;
}

void* memcpy(void* dest, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dest);
  const auto* s = static_cast<const unsigned char*>(src);
  while (n-- > 0) *d++ = *s++;
  return dest;
}

void* memmove(void* dest, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dest);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d < s) {
    while (n-- > 0) *d++ = *s++;
  } else {
    while (n-- > 0) d[n] = s[n];
  }
  return dest;
}

size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

// noreturn: declared so by <unistd.h>.
void _exit(int status) {
  for (;;) RawSyscall(SYS_exit_group, status);
}

long syscall(long n, ...) {
  va_list args;
  va_start(args, n);
  long a = va_arg(args, long), b = va_arg(args, long), c = va_arg(args, long);
  long d = va_arg(args, long), e = va_arg(args, long), f = va_arg(args, long);
  va_end(args);
  return Sys(n, a, b, c, d, e, f);
}

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(args, mode_t) : 0;
  va_end(args);
  return static_cast<int>(Sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), flags, mode));
}

int ioctl(int fd, unsigned long request, ...) {
  va_list args;
  va_start(args, request);
  long arg = va_arg(args, long);
  va_end(args);
  return static_cast<int>(Sys(SYS_ioctl, fd, static_cast<long>(request), arg));
}

int prctl(int option, ...) {
  va_list args;
  va_start(args, option);
  long a = va_arg(args, long), b = va_arg(args, long), c = va_arg(args, long),
       d = va_arg(args, long);
  va_end(args);
  return static_cast<int>(Sys(SYS_prctl, option, a, b, c, d));
}

ssize_t write(int fd, const void* buf, size_t n) {
  return Sys(SYS_write, fd, reinterpret_cast<long>(buf), static_cast<long>(n));
}
int close(int fd) { return static_cast<int>(Sys(SYS_close, fd)); }
int dup2(int from, int to) { return static_cast<int>(Sys(SYS_dup2, from, to)); }
int chdir(const char* path) {
  return static_cast<int>(Sys(SYS_chdir, reinterpret_cast<long>(path)));
}
int mkdir(const char* path, mode_t mode) {
  return static_cast<int>(Sys(SYS_mkdir, reinterpret_cast<long>(path), mode));
}
int rmdir(const char* path) {
  return static_cast<int>(Sys(SYS_rmdir, reinterpret_cast<long>(path)));
}
int symlink(const char* target, const char* path) {
  return static_cast<int>(
      Sys(SYS_symlink, reinterpret_cast<long>(target), reinterpret_cast<long>(path)));
}
int mknod(const char* path, mode_t mode, dev_t dev) {
  return static_cast<int>(
      Sys(SYS_mknod, reinterpret_cast<long>(path), mode, static_cast<long>(dev)));
}
mode_t umask(mode_t mask) { return static_cast<mode_t>(RawSyscall(SYS_umask, mask)); }
int mount(const char* source, const char* target, const char* fstype, unsigned long flags,
          const void* data) {
  return static_cast<int>(Sys(SYS_mount, reinterpret_cast<long>(source),
                              reinterpret_cast<long>(target), reinterpret_cast<long>(fstype),
                              static_cast<long>(flags), reinterpret_cast<long>(data)));
}
int umount2(const char* target, int flags) {
  return static_cast<int>(Sys(SYS_umount2, reinterpret_cast<long>(target), flags));
}
int sethostname(const char* name, size_t len) {
  return static_cast<int>(
      Sys(SYS_sethostname, reinterpret_cast<long>(name), static_cast<long>(len)));
}
int socket(int domain, int type, int protocol) {
  return static_cast<int>(Sys(SYS_socket, domain, type, protocol));
}
ssize_t recvmsg(int fd, struct msghdr* message, int flags) {
  return Sys(SYS_recvmsg, fd, reinterpret_cast<long>(message), flags);
}
int kill(pid_t pid, int sig) { return static_cast<int>(Sys(SYS_kill, pid, sig)); }
int setns(int fd, int nstype) { return static_cast<int>(Sys(SYS_setns, fd, nstype)); }
int unshare(int flags) { return static_cast<int>(Sys(SYS_unshare, flags)); }
pid_t setsid() { return static_cast<pid_t>(Sys(SYS_setsid)); }
int setrlimit(__rlimit_resource_t resource, const struct rlimit* limit) {
  return static_cast<int>(Sys(SYS_prlimit64, 0, resource, reinterpret_cast<long>(limit), 0));
}
int execve(const char* path, char* const argv[], char* const envp[]) {
  return static_cast<int>(Sys(SYS_execve, reinterpret_cast<long>(path),
                              reinterpret_cast<long>(argv), reinterpret_cast<long>(envp)));
}
pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) {
  return static_cast<pid_t>(
      Sys(SYS_wait4, pid, reinterpret_cast<long>(status), options, reinterpret_cast<long>(usage)));
}

int sigemptyset(sigset_t* set) {
  memset(set, 0, sizeof(*set));
  return 0;
}
int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  return static_cast<int>(Sys(SYS_rt_sigprocmask, how, reinterpret_cast<long>(set),
                              reinterpret_cast<long>(old), sizeof(unsigned long)));
}
// Only what the init does with it: restore SIG_DFL (no handler, so no
// restorer is needed).
int sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  if (old != nullptr || action == nullptr || action->sa_handler != SIG_DFL) {
    g_errno = EINVAL;
    return -1;
  }
  KernelSigaction kernel{SIG_DFL, 0, nullptr, 0};
  return static_cast<int>(
      Sys(SYS_rt_sigaction, sig, reinterpret_cast<long>(&kernel), 0, sizeof(unsigned long)));
}

}  // extern "C"

// vfork returns twice on one stack, so it cannot be a C++ function that
// keeps its return address on the stack: like glibc's, it pops the return
// address into a register, makes the syscall and pushes it back.
asm(R"(
  .text
  .globl vfork
  .type vfork, @function
vfork:
  pop %rdi
  mov $58, %eax
  syscall
  push %rdi
  cmp $-4095, %rax
  jae 1f
  ret
1:
  neg %eax
  mov %eax, %edi
  jmp vfork_failed
)");

extern "C" pid_t vfork_failed(int err) {
  g_errno = err;
  return -1;
}
