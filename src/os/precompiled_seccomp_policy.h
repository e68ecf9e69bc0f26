#ifndef AEVATAR_OS_PRECOMPILED_SECCOMP_POLICY_H_
#define AEVATAR_OS_PRECOMPILED_SECCOMP_POLICY_H_

#include "os/seccomp_program.h"

namespace aevatar::os {

// BuildSandboxSeccompPolicy() (seccomp_policy.h) as compiled at build time (by
// seccomp_policy_gen, on the build machine's libseccomp and kernel), so a
// process does not compile it at every start: a one-shot `chrono-sandbox
// run` spent ~0.13 ms of its ~4 ms there. A kernel too old for an action the
// build chose makes loading fail, and the run with it (fail closed).
SeccompProgram PrecompiledSandboxPolicy();

}  // namespace aevatar::os

#endif  // AEVATAR_OS_PRECOMPILED_SECCOMP_POLICY_H_
