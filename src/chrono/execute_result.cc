#include "chrono/execute_result.h"

#include "base/utf8.h"

namespace aevatar::chrono {

bool RunSucceeded(const sandbox::RunResult& result) {
  return result.verdict == sandbox::Verdict::kOk;
}

nlohmann::json ExecuteResultJson(const sandbox::RunResult& result) {
  return {
      {"success", RunSucceeded(result)},
      {"exit_code", result.exit_code},
      {"stdout", base::ToValidUtf8(result.stdout_data)},
      {"stderr", base::ToValidUtf8(result.stderr_data)},
      {"execution_time_ms", result.wall_ms},
      {"timed_out", result.verdict == sandbox::Verdict::kWallTimeout},
      {"verdict", sandbox::VerdictName(result.verdict)},
      {"stdout_truncated", result.stdout_truncated},
      {"stderr_truncated", result.stderr_truncated},
  };
}

}  // namespace aevatar::chrono
