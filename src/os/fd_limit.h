#ifndef AEVATAR_OS_FD_LIMIT_H_
#define AEVATAR_OS_FD_LIMIT_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace aevatar::os {

// Raises this process's soft RLIMIT_NOFILE to its hard limit (a no-op when
// they are equal) and returns the soft limit now in force. Servers holding
// many idle connections call this once at start; children that need a lower
// limit (the sandbox) set their own. Thread-safe; the limit is process-wide.
absl::StatusOr<uint64_t> RaiseOpenFileLimit();

}  // namespace aevatar::os

#endif  // AEVATAR_OS_FD_LIMIT_H_
