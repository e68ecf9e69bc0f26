#include "sandbox/result_json.h"

#include "gtest/gtest.h"

namespace aevatar::sandbox {
namespace {

TEST(RunResultToJson, HasEveryContractField) {
  RunResult result;
  result.exit_code = 137;
  result.signal = 9;
  result.verdict = Verdict::kWallTimeout;
  result.stdout_data = "out";
  result.stderr_truncated = true;
  result.wall_ms = 1000;
  nlohmann::json json = RunResultToJson(result);
  for (const char* key : {"exit_code", "signal", "verdict", "stdout", "stderr", "stdout_truncated",
                          "stderr_truncated", "wall_ms", "cpu_ms", "max_rss_kb"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["verdict"], "wall_timeout");
  EXPECT_EQ(json["stdout"], "out");
  EXPECT_EQ(json["stderr_truncated"], true);
}

}  // namespace
}  // namespace aevatar::sandbox
