#ifndef AEVATAR_SANDBOX_RESULT_JSON_H_
#define AEVATAR_SANDBOX_RESULT_JSON_H_

#include "nlohmann/json.hpp"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// The engine's result as JSON: exit_code, signal, verdict, stdout, stderr,
// stdout_truncated, stderr_truncated, wall_ms, cpu_ms, max_rss_kb. Output that
// is not valid UTF-8 has the bad bytes replaced by U+FFFD.
nlohmann::json RunResultToJson(const RunResult& result);

// Returns `bytes` as valid UTF-8, with invalid sequences replaced by U+FFFD.
std::string ToValidUtf8(std::string_view bytes);
// Whether `bytes` is all valid UTF-8.
bool IsValidUtf8(std::string_view bytes);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RESULT_JSON_H_
