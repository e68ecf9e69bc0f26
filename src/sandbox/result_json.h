#ifndef AEVATAR_SANDBOX_RESULT_JSON_H_
#define AEVATAR_SANDBOX_RESULT_JSON_H_

#include "nlohmann/json.hpp"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// The engine's result as JSON: exit_code, signal, verdict, stdout, stderr,
// stdout_truncated, stderr_truncated, wall_ms, cpu_ms, max_rss_kb. Output that
// is not valid UTF-8 has the bad bytes replaced by U+FFFD.
nlohmann::json RunResultToJson(const RunResult& result);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RESULT_JSON_H_
