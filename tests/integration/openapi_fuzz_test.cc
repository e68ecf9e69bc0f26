// The OpenAPI fuzzer (tests/openapi/fuzz.mjs) against the three real binaries
// under `aevatar up`, with the demo user's real NyxID login: every operation
// of each service's GET /openapi.json, seeded cases (half broken on purpose),
// bounded per service in cases and time. No answer may be a 500 or another
// undeclared 5xx, contradict the document (status, Content-Type, schema) or
// be a problem+json without code and diagnostic_id. chrono-sandbox is called
// through NyxID's proxy route, which injects its delegation token.
//
// The seed is fixed (kSeed) so a failure reproduces; AEVATAR_FUZZ_SEED=N
// runs another one (the output names the seed of every violation).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kTestNode[] = "/opt/aevatar/test-node/node_modules";
constexpr char kScript[] = AEVATAR_SOURCE_DIR "/tests/openapi/fuzz.mjs";
constexpr int kSeed = 1414;
constexpr int kExamplesPerOperation = 24;
constexpr int kBudgetSecsPerService = 60;

bool Installed(const std::string& package) {
  return ::access((std::string(kTestNode) + "/" + package + "/package.json").c_str(), R_OK) == 0;
}

TEST(OpenApiFuzz, NoServiceAnswersOutsideItsDocument) {
  if (!Installed("json-schema-faker") || !Installed("ajv")) {
    GTEST_SKIP() << "json-schema-faker or ajv is not installed under " << kTestNode
                 << " (scripts/setup installs both)";
  }
  TempDir dir("/var/tmp");
  const std::string state = dir.path() + "/state";
  const uint16_t base = PickFreePortRange(3);
  ServiceProcess up(
      {BinaryPath("aevatar"), "up", "--state-dir", state, "--port-base", std::to_string(base)},
      dir.path() + "/up.log");
  ASSERT_TRUE(up.ok()) << up.ReadLog();
  std::ifstream in(state + "/credentials.json");
  const json credentials = json::parse(in, nullptr, false);
  ASSERT_TRUE(credentials.is_object());
  const std::string nyxid = credentials["nyxid_url"];
  const std::string chrono = credentials["chrono_url"];
  const std::string aevatar = credentials["aevatar_url"];

  const json config = {
      {"seed", kSeed},
      {"examples", kExamplesPerOperation},
      {"budget_secs", kBudgetSecsPerService},
      {"nyxid_url", nyxid},
      {"username", "demo"},
      {"password", credentials["demo"]["password"]},
      {"services",
       {{{"name", "nyxid"},
         {"document_url", nyxid + "/openapi.json"},
         {"base_url", nyxid},
         // Logging out revokes the very token the fuzzer runs with.
         {"skip", {"POST /api/v1/auth/logout"}}},
        {{"name", "chrono-sandbox"},
         {"document_url", chrono + "/openapi.json"},
         {"base_url", nyxid + "/api/v1/proxy/chrono-sandbox"},
         {"via_slug", "chrono-sandbox"}},
        {{"name", "aevatar"}, {"document_url", aevatar + "/openapi.json"}, {"base_url", aevatar}}}},
  };
  std::ofstream(dir.path() + "/config.json") << config.dump();
  const ShellRun run = RunShell(dir.path(), "timeout 400 node " + std::string(kScript) +
                                                " \"$(cat '" + dir.path() + "/config.json')\"");
  std::cout << run.out;  // the seed and the cases per service, in the test log
  EXPECT_EQ(run.exit_code, 0) << "violations above; " << run.err;
  const std::string last = run.out.substr(run.out.rfind('\n', run.out.size() - 2) + 1);
  const json summary = json::parse(last, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << run.err;
  EXPECT_TRUE(summary.value("ok", false));
  const char* seed = std::getenv("AEVATAR_FUZZ_SEED");
  EXPECT_EQ(summary.value("seed", 0), seed != nullptr ? std::atoi(seed) : kSeed);
  ASSERT_EQ(summary["services"].size(), 3u);
  for (const json& service : summary["services"]) {
    // Every service answered real cases (not an empty document, not all skipped).
    EXPECT_GE(service.value("cases", 0), 20) << service.dump();
  }
  // The fuzzer's credential never reaches a log line.
  EXPECT_EQ(up.ReadLog().find(credentials["demo"]["password"].get<std::string>()),
            std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
