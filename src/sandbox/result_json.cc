#include "sandbox/result_json.h"

#include "base/utf8.h"

namespace aevatar::sandbox {

nlohmann::json RunResultToJson(const RunResult& result) {
  return {
      {"exit_code", result.exit_code},
      {"signal", result.signal},
      {"verdict", VerdictName(result.verdict)},
      {"stdout", base::ToValidUtf8(result.stdout_data)},
      {"stderr", base::ToValidUtf8(result.stderr_data)},
      {"stdout_truncated", result.stdout_truncated},
      {"stderr_truncated", result.stderr_truncated},
      {"wall_ms", result.wall_ms},
      {"cpu_ms", result.cpu_ms},
      {"max_rss_kb", result.max_rss_kb},
  };
}

}  // namespace aevatar::sandbox
