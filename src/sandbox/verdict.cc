#include "sandbox/verdict.h"

#include <signal.h>
#include <sys/wait.h>

namespace aevatar::sandbox {

void ApplyVerdict(const RunFacts& facts, RunResult& result) {
  const int status = facts.wait_status;
  const bool signaled = WIFSIGNALED(status);
  result.signal = signaled ? WTERMSIG(status) : 0;
  result.exit_code = signaled ? 128 + result.signal : WEXITSTATUS(status);
  result.cancelled = facts.cancelled;

  const bool cpu_killed =
      result.signal == SIGXCPU || (result.signal == SIGKILL && facts.cpu_limit_secs > 0 &&
                                   facts.stage_cpu_ms >= int64_t{facts.cpu_limit_secs} * 1000);
  if (facts.wall_timeout) {
    result.verdict = Verdict::kWallTimeout;
  } else if (facts.oom_kills > 0) {
    result.verdict = Verdict::kMemoryLimit;
  } else if (cpu_killed) {
    result.verdict = Verdict::kCpuLimit;
  } else if (result.signal == SIGXFSZ) {
    result.verdict = Verdict::kFileSizeLimit;
  } else if (facts.pids_max_events > 0) {
    result.verdict = Verdict::kPidsLimit;
  } else if (facts.output_truncated) {
    result.verdict = Verdict::kOutputLimit;
  } else if (signaled) {
    result.verdict = Verdict::kSignaled;
  } else if (result.exit_code != 0) {
    result.verdict = Verdict::kNonzeroExit;
  } else {
    result.verdict = Verdict::kOk;
  }
}

}  // namespace aevatar::sandbox
