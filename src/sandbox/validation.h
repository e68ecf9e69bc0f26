#ifndef AEVATAR_SANDBOX_VALIDATION_H_
#define AEVATAR_SANDBOX_VALIDATION_H_

#include <vector>

#include "absl/status/status.h"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

constexpr int kMinWallTimeoutSecs = 1;
constexpr int kMaxWallTimeoutSecs = 600;
constexpr size_t kMaxEnvVars = 128;
constexpr size_t kMaxEnvBytes = 64 * 1024;

// Returns InvalidArgument naming the offending variable (never its value) when
// a caller variable is malformed, reserved for the server (NYXID_*), or a
// loader hijack (LD_*). Plain NAME=value pairs pass.
absl::Status ValidateCallerEnv(const std::vector<EnvVar>& env);

// Returns InvalidArgument unless every server file has contents or (not
// both) an absolute host path outside /tmp (kRootMountPoint, hidden by the native backend's new
// root) and a sandbox path of the form /opt/NAME[/NAME...] (no "." or ".." segments, no empty
// segments): outside every directory the rootfs mounts.
absl::Status ValidateServerFiles(const std::vector<ServerFile>& files);

// Returns InvalidArgument unless there are at most kMaxMemoryDirs memory
// directories, each a distinct name of 1..64 characters of [A-Za-z0-9._-]
// other than "." and "..".
inline constexpr size_t kMaxMemoryDirs = 4;
absl::Status ValidateMemoryDirs(const std::vector<std::string>& names);

// Returns InvalidArgument when `limits` is out of range or above `maxima`.
absl::Status ValidateLimits(const Limits& limits, const Limits& maxima);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_VALIDATION_H_
