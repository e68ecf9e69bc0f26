// chrono-sandbox-init: the sandbox init of one run (pid 1 of its pid
// namespace), exec'd by the engine with the descriptors of init_image.h.
// No C library: freestanding_libc.cc provides the calls child_exec.cc makes.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/child_exec.h"
#include "os/init_image.h"

namespace {

using aevatar::os::ChildFailure;
using aevatar::os::ChildStep;

[[noreturn]] void FailWithoutPlan(int err) {
  ChildFailure failure{ChildStep::kPlan, err, 0};
  (void)::write(aevatar::os::kInitErrorFd, &failure, sizeof(failure));
  ::_exit(127);
}

}  // namespace

extern "C" [[noreturn]] void InitMain() {
  const long size = ::syscall(SYS_lseek, aevatar::os::kInitImageFd, 0, SEEK_END);
  if (size <= 0) FailWithoutPlan(EPROTO);
  // A private, writable mapping: relocation rewrites the offsets in place.
  const long image = ::syscall(SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
                               aevatar::os::kInitImageFd, 0);
  if (image == -1) FailWithoutPlan(errno);
  ::close(aevatar::os::kInitImageFd);
  aevatar::os::ChildPlan* plan =
      aevatar::os::ReadInitImage(reinterpret_cast<void*>(image), static_cast<size_t>(size));
  if (plan == nullptr) FailWithoutPlan(EPROTO);
  aevatar::os::RunSandboxInit(*plan);
}

// The entry point: align the stack as the ABI wants at a call, then enter C++.
asm(R"(
  .text
  .globl _start
  .type _start, @function
_start:
  xor %ebp, %ebp
  and $-16, %rsp
  call InitMain
  hlt
)");
