#ifndef AEVATAR_OS_OUTPUT_PUMP_H_
#define AEVATAR_OS_OUTPUT_PUMP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "os/process.h"

namespace aevatar::os {

// Bytes kept from one output stream; the rest is read and discarded so that a
// flood can neither block the program nor exhaust the service.
struct StreamCapture {
  std::string data;
  bool truncated = false;
  uint64_t total_bytes = 0;
};

enum class PumpEnd {
  kExited,     // the child exited by itself
  kDeadline,   // the wall deadline passed and the child was killed
  kCancelled,  // cancel_fd became readable and the child was killed
};

struct PumpResult {
  StreamCapture out;
  StreamCapture err;
  PumpEnd end = PumpEnd::kExited;
};

struct PumpOptions {
  std::chrono::steady_clock::time_point deadline;
  size_t max_bytes_per_stream = 1 << 20;
  int cancel_fd = -1;  // optional: an eventfd or pipe; readable means "kill now"
};

// Reads `stdout_fd` and `stderr_fd` (non-blocking read ends) until both reach
// EOF after `child` exited, killing `child` with SIGKILL when the deadline
// passes or cancel_fd fires. Does not reap the child. Returns an error only
// when polling itself fails.
absl::StatusOr<PumpResult> PumpOutput(int stdout_fd, int stderr_fd, ChildProcess& child,
                                      const PumpOptions& options);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_OUTPUT_PUMP_H_
