#ifndef AEVATAR_DOCTOR_HOST_CHECKS_INTERNAL_H_
#define AEVATAR_DOCTOR_HOST_CHECKS_INTERNAL_H_

#include <vector>

#include "doctor/check.h"
#include "doctor/host_checks.h"

// The two halves of HostChecks (host_checks.h), one file each.
namespace aevatar::doctor::internal {

// root, namespaces, cgroups, NO_NEW_PRIVS, seccomp, the sandbox init, disk.
void AppendKernelChecks(const HostCheckOptions& options, std::vector<Check>& checks);

// Language runtimes, runsc, the Codex CLI and the sandboxed hello worlds.
void AppendRuntimeChecks(const HostCheckOptions& options, std::vector<Check>& checks);

}  // namespace aevatar::doctor::internal

#endif  // AEVATAR_DOCTOR_HOST_CHECKS_INTERNAL_H_
