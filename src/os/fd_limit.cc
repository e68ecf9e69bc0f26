#include "os/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>

#include "base/errno_error.h"

namespace aevatar::os {

absl::StatusOr<uint64_t> RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return base::ErrnoError("getrlimit NOFILE", errno);
  if (limit.rlim_cur == limit.rlim_max) return static_cast<uint64_t>(limit.rlim_cur);
  rlimit raised = limit;
  raised.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
    return base::ErrnoError("setrlimit NOFILE", errno);
  }
  return static_cast<uint64_t>(raised.rlim_cur);
}

}  // namespace aevatar::os
