#ifndef AEVATAR_CHRONO_EXECUTE_RESULT_H_
#define AEVATAR_CHRONO_EXECUTE_RESULT_H_

#include "nlohmann/json.hpp"
#include "sandbox/run_spec.h"

namespace aevatar::chrono {

// The /execute response shape:
//   {success, exit_code, stdout, stderr, execution_time_ms, timed_out, verdict,
//    stdout_truncated, stderr_truncated}
// success means the program exited 0 within every limit (verdict "ok").
nlohmann::json ExecuteResultJson(const sandbox::RunResult& result);

// Whether a finished run counts as a succeeded operation (else failed).
bool RunSucceeded(const sandbox::RunResult& result);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_EXECUTE_RESULT_H_
