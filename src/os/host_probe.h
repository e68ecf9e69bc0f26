#ifndef AEVATAR_OS_HOST_PROBE_H_
#define AEVATAR_OS_HOST_PROBE_H_

#include <linux/filter.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Probes of what the host lets this process do, for `doctor` preflights.
// Each probe that changes process state (a namespace, a seccomp filter,
// NO_NEW_PRIVS) does so in a short-lived forked child, never in the caller.
// Thread-safe.
namespace aevatar::os {

// Whether a child of this process can unshare the namespace `clone_flag`
// (one CLONE_NEW* flag). OK, or the errno of unshare ("unshare: Operation
// not permitted").
absl::Status ProbeUnshare(int clone_flag);

// Whether a child can set NO_NEW_PRIVS and then reads it back as set.
absl::Status ProbeNoNewPrivs();

// Whether a child can install `program` as its seccomp filter (after
// NO_NEW_PRIVS, as the sandbox does) and still exit normally under it.
absl::Status ProbeSeccompFilter(const sock_fprog* program);

// Bytes available to an unprivileged user on the filesystem holding `path`.
absl::StatusOr<uint64_t> FreeDiskBytes(const std::string& path);

// Runs `argv` (argv[0] an absolute path) with an empty environment and
// returns its stdout (at most 64 KiB). Fails when it cannot start, exits
// non-zero or outlives `timeout` (it is killed then).
absl::StatusOr<std::string> CaptureProgramOutput(const std::vector<std::string>& argv,
                                                 std::chrono::milliseconds timeout);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_HOST_PROBE_H_
