#ifndef AEVATAR_BASE_ERRNO_ERROR_H_
#define AEVATAR_BASE_ERRNO_ERROR_H_

#include <string_view>

#include "absl/status/status.h"

namespace aevatar::base {

// Returns an error Status naming the failing call and its subject, e.g.
// ErrnoError("mount /proc", EPERM) -> "mount /proc: Operation not permitted".
// The status code follows the errno (ENOENT -> NotFound, EACCES/EPERM ->
// PermissionDenied, ...), so callers can branch on it.
absl::Status ErrnoError(std::string_view what, int err);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_ERRNO_ERROR_H_
