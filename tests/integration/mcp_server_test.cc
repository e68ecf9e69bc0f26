// aevatar's MCP server end to end with the official MCP SDK client
// (@modelcontextprotocol/sdk, pinned in scripts/setup): the whole managed
// stack (NyxID, chrono-sandbox, aevatar; only the model is the
// responses-double), and tests/mcp/mcp_client.cjs connecting over stdio
// (`aevatar mcp`) and Streamable HTTP (POST /mcp). The script checks
// initialize, the tool list against GET /api/tools, code_execute in the four
// languages, codex_exec, typed errors and cancelled code_execute and
// codex_exec runs that must stop.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/crypto.h"
#include "managed_codex_stack.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using json = nlohmann::json;

constexpr char kSdk[] = "/opt/aevatar/test-node/node_modules/@modelcontextprotocol/sdk";
constexpr char kScript[] = AEVATAR_SOURCE_DIR "/tests/mcp/mcp_client.cjs";

// Whether `logs` has aevatar's mcp.call_cancelled line for `tool` whose run
// ended "cancelled".
bool CancelledLine(const std::string& logs, const std::string& tool) {
  std::istringstream lines(logs);
  for (std::string line; std::getline(lines, line);) {
    const json entry = json::parse(line, nullptr, false);
    if (entry.is_object() && entry.value("event", "") == "mcp.call_cancelled" &&
        entry.value("tool", "") == tool && entry.value("execution_status", "") == "cancelled") {
      return true;
    }
  }
  return false;
}

TEST(McpServer, OfficialSdkClientOverStdioAndHttp) {
  if (!std::filesystem::exists(std::string(kSdk) + "/package.json")) {
    GTEST_SKIP() << "the MCP SDK is not installed (scripts/setup installs it)";
  }
  ManagedCodexOptions options;
  options.backend = "native";
  ManagedCodexStack stack(std::move(options));
  ASSERT_TRUE(stack.ok());
  const std::string alice = stack.Login("alice");
  ASSERT_FALSE(alice.empty());
  ASSERT_EQ(stack.EnsureCredential(alice).status, 200);
  // stdio runs with an Agent Key from the environment, restricted to alice's
  // chrono-sandbox route (the least-privilege key docs/mcp.md suggests);
  // HTTP with her access token.
  const std::string agent_key =
      stack.stack().nyxid().CreateAgentKey(alice, "mcp", {"chrono-sandbox"}).value("key", "");
  ASSERT_FALSE(agent_key.empty());

  // A unique sleep length: the script finds the cancelled program by it.
  const std::string marker =
      "7" + std::to_string(static_cast<unsigned char>(base::RandomBytes(1)[0])) + ".31337";
  const json config = {{"url", stack.stack().aevatar().base_url()},
                       {"token", alice},
                       {"agent_key", agent_key},
                       {"aevatar", BinaryPath("aevatar")},
                       {"marker", marker},
                       {"chrono_pid", stack.stack().chrono().pid()}};
  // Outside the stack's directory, whose files are grepped for secrets below.
  TempDir scratch;
  const std::string dir = scratch.path();
  std::ofstream(dir + "/mcp-config.json") << config.dump();
  const ShellRun run = RunShell(dir, std::string("MCP_SDK=") + kSdk + " timeout 900 node " +
                                         kScript + " \"$(cat '" + dir + "/mcp-config.json')\"");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const json summary = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << run.out << run.err;
  EXPECT_EQ(summary.value("ok", false), true);
  // A call that ran for seconds reported progress along the way.
  EXPECT_GT(summary.value("cancel_progress", 0), 0);

  // The model double answered codex_exec. The credentials are nowhere in the
  // state or logs; the programs' source is in no log (chrono-sandbox's
  // durable store holds a submitted program by design, until it ends).
  EXPECT_FALSE(stack.ModelRecord().empty());
  const std::string state = stack.AllStateAndLogs();
  EXPECT_EQ(state.find(alice), std::string::npos);
  EXPECT_EQ(state.find(agent_key), std::string::npos);
  const std::string logs = stack.stack().aevatar().ReadLog() + stack.stack().chrono().ReadLog();
  EXPECT_EQ(logs.find("sleep " + marker), std::string::npos);
  // aevatar saw the client's cancels and the executor confirmed the stop;
  // for codex_exec, chrono-sandbox killed the run and answered "cancelled".
  EXPECT_TRUE(CancelledLine(logs, "code_execute")) << logs;
  EXPECT_TRUE(CancelledLine(logs, "codex_exec")) << logs;
  // A fragment JSON escaping leaves as it is, so a logged copy would match.
  EXPECT_EQ(logs.find("str(6 * 7), sys.version_info"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
