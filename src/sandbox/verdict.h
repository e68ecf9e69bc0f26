#ifndef AEVATAR_SANDBOX_VERDICT_H_
#define AEVATAR_SANDBOX_VERDICT_H_

#include <cstdint>

#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// The facts a backend observed about one finished run.
struct RunFacts {
  int wait_status = 0;        // of the last stage, as from waitpid
  bool wall_timeout = false;  // we killed it at the deadline
  bool cancelled = false;     // we killed it on the caller's request
  int64_t stage_cpu_ms = 0;   // CPU of the last stage (for RLIMIT_CPU kills)
  int cpu_limit_secs = 0;     // the RLIMIT_CPU soft limit applied
  uint64_t oom_kills = 0;
  uint64_t pids_max_events = 0;
  bool output_truncated = false;
};

// Fills exit_code, signal, verdict and cancelled of `result` from `facts`.
// Precedence, first match wins: wall_timeout, memory_limit, cpu_limit,
// file_size_limit, pids_limit, output_limit, signaled, nonzero_exit, ok.
void ApplyVerdict(const RunFacts& facts, RunResult& result);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_VERDICT_H_
