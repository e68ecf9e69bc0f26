#include "os/precompiled_seccomp_policy.h"

#include <iterator>

namespace aevatar::os {
namespace {

constexpr sock_filter kSandboxPolicy[] = {
#include "sandbox_seccomp_policy.inc"
};

}  // namespace

SeccompProgram PrecompiledSandboxPolicy() {
  return SeccompProgram::FromFilters(
      std::vector<sock_filter>(std::begin(kSandboxPolicy), std::end(kSandboxPolicy)));
}

}  // namespace aevatar::os
