// `aevatar mcp` (the stdio relay) under a host that runs more calls than it
// relays at once: the request past the bound is refused at once with a typed
// JSON-RPC error, and stdin keeps being read, so a cancellation for a running
// call reaches aevatar while the calls run. aevatar here is a double: a
// loopback HTTP server that holds every tools/call open until it has seen the
// cancellation (the real /mcp is tested in mcp_server_test).
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "http/server.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr int kRelayBound = 64;  // InFlight::kMax in src/cli/aevatar_mcp_command.cc

// The /mcp double: holds every tools/call open until the cancellation has
// arrived, and notes whether it arrived before any call was answered (the
// relay refusing, not waiting, lets it through).
class HoldingMcp {
 public:
  http::Response Handle(http::Request& request) {
    const json message = json::parse(request.body, nullptr, false);
    const std::string method = message.is_object() ? message.value("method", "") : "";
    absl::MutexLock lock(&mu_);
    if (method == "notifications/cancelled") {
      cancelled_before_any_answer_ = answered_ == 0;
      cancelled_ = true;
      http::Response accepted;
      accepted.status = 202;
      return accepted;
    }
    mu_.AwaitWithTimeout(absl::Condition(&cancelled_), absl::FromChrono(kHangGuard));
    ++answered_;
    return http::JsonResponse(
        200, json{{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", json::object()}}.dump());
  }

  bool cancelled_before_any_answer() {
    absl::MutexLock lock(&mu_);
    return cancelled_ && cancelled_before_any_answer_;
  }

 private:
  absl::Mutex mu_;
  int answered_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_before_any_answer_ ABSL_GUARDED_BY(mu_) = false;
};

json ToolsCall(int id) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", "code_execute"}, {"arguments", {{"language", "bash"}}}}}};
}

TEST(McpStdioRelay, RequestPastTheBoundIsRefusedAndCancellationsStillArrive) {
  auto mcp = std::make_shared<HoldingMcp>();
  auto server =
      http::Server::Start({}, [mcp](http::Request& request) { return mcp->Handle(request); });
  ASSERT_TRUE(server.ok()) << server.status();
  TempDir dir;
  const std::string input = dir.path() + "/stdin.jsonl";
  {
    std::ofstream lines(input);
    for (int id = 1; id <= kRelayBound + 1; ++id) lines << ToolsCall(id).dump() << "\n";
    lines << json{{"jsonrpc", "2.0"},
                  {"method", "notifications/cancelled"},
                  {"params", {{"requestId", 1}}}}
                 .dump()
          << "\n";
  }
  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
  const ShellRun run = RunShell(dir.path(),
                                "HOME='" + dir.path() + "' AEVATAR_AGENT_KEY=planted-agent-key '" +
                                    BinaryPath("aevatar") + "' mcp --url " + url,
                                input);
  (*server)->Stop();

  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(mcp->cancelled_before_any_answer())
      << "the cancellation reached aevatar only after a held call had ended";
  int answered = 0;
  std::vector<json> errors;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line);) {
    const json message = json::parse(line, nullptr, false);
    ASSERT_TRUE(message.is_object()) << line;
    if (message.contains("result")) ++answered;
    if (message.contains("error")) errors.push_back(message);
  }
  EXPECT_EQ(answered, kRelayBound);
  ASSERT_EQ(errors.size(), 1u) << run.out;
  EXPECT_EQ(errors[0]["id"], kRelayBound + 1);
  EXPECT_EQ(errors[0]["error"]["data"]["code"], "MCP_TOO_MANY_REQUESTS");
  EXPECT_EQ(run.out.find("planted-agent-key"), std::string::npos);
  EXPECT_EQ(run.err.find("planted-agent-key"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
