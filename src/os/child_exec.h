#ifndef AEVATAR_OS_CHILD_EXEC_H_
#define AEVATAR_OS_CHILD_EXEC_H_

#include "os/child_plan.h"

namespace aevatar::os {

// The body of the sandbox init (chrono-sandbox-init, pid 1 of the run's pid
// namespace): builds the filesystem, waits for the hand-off, then runs each
// stage of `plan` as a hardened grandchild and reports its wait status on
// plan.status_fd. Never returns. See child_exec.cc for the rules that bind it.
[[noreturn]] void RunSandboxInit(const ChildPlan& plan);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_CHILD_EXEC_H_
