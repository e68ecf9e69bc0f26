// `aevatar backup` / `aevatar restore` on the state directory of a running
// `aevatar up`: a backup taken while serving holds exactly the work accepted
// before it (a workflow run and its durable execution at chrono-sandbox);
// restore refuses while the stack runs and refuses a tampered backup.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

http::ClientResponse Call(const std::string& method, const std::string& url,
                          const std::string& bearer, const std::string& body = "") {
  http::ClientRequest request;
  request.method = method;
  request.url = url;
  request.body = body;
  request.timeout = std::chrono::seconds(60);
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  auto response = http::Fetch(request);
  return response.ok() ? *response : http::ClientResponse{};
}

// The demo user of `aevatar up`, logged in, and aevatar's URL.
struct Demo {
  std::string aevatar_url;
  std::string token;
};

Demo LogIn(const std::string& state) {
  std::ifstream in(state + "/credentials.json");
  const json credentials = json::parse(in, nullptr, false);
  EXPECT_TRUE(credentials.is_object());
  if (!credentials.is_object()) return {};
  auto login =
      Call("POST", credentials["nyxid_url"].get<std::string>() + "/api/v1/auth/login", "",
           json{{"username", "demo"}, {"password", credentials["demo"]["password"]}}.dump());
  EXPECT_EQ(login.status, 200) << login.body;
  return {credentials["aevatar_url"].get<std::string>(), JsonOf(login).value("access_token", "")};
}

// Starts a one-step workflow whose code_execute step prints `word`, waits
// until the run is done, and returns its id and its operation id at
// chrono-sandbox.
struct AcceptedRun {
  std::string run_id;
  std::string operation_id;
};

AcceptedRun RunToCompletion(const Demo& demo, const std::string& word) {
  const std::string yaml = "workflow_id: backup-" + word +
                           "\nsteps:\n  - id: say\n    tool: code_execute\n    arguments:\n"
                           "      language: bash\n      source: echo " +
                           word + "\n";
  auto started = Call("POST", demo.aevatar_url + "/api/workflow-runs", demo.token,
                      json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  EXPECT_EQ(started.status, 202) << started.body;
  AcceptedRun run{JsonOf(started).value("run_id", ""), ""};
  for (int i = 0; i < 1200 && !run.run_id.empty(); ++i) {
    const json view =
        JsonOf(Call("GET", demo.aevatar_url + "/api/workflow-runs/" + run.run_id, demo.token));
    if (view.value("done", false)) {
      EXPECT_EQ(view.value("status", ""), "succeeded") << view.dump();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const json events = JsonOf(
      Call("GET", demo.aevatar_url + "/api/workflow-runs/" + run.run_id + "/events", demo.token));
  for (const json& event : events.value("events", json::array())) {
    if (event.value("type", "") == "step.submitted") {
      run.operation_id = event["data"].value("operation_id", "");
    }
  }
  EXPECT_FALSE(run.operation_id.empty()) << events.dump();
  return run;
}

// How many rows of chrono-sandbox's operations table have `id`, through the
// sqlite3 shell (a reader beside the running service).
std::string OperationRows(const std::string& state, const std::string& id) {
  ShellRun query = RunShell(state + "/..", "sqlite3 " + state +
                                               "/chrono-sandbox/operations.db "
                                               "\"SELECT count(*) FROM operations WHERE id = '" +
                                               id + "'\"");
  EXPECT_EQ(query.exit_code, 0) << query.err;
  return query.out;
}

// Prints the stacks' logs when the test has failed: a failure seen once in CI
// must say what the services did.
struct LogsOnFailure {
  std::vector<std::string> paths;
  ~LogsOnFailure() {
    if (!::testing::Test::HasFailure()) return;
    for (const std::string& path : paths) {
      std::ifstream in(path);
      std::cerr << "--- " << path << " ---\n" << in.rdbuf() << "\n";
    }
  }
};

ShellRun Aevatar(const std::string& dir, const std::string& args) {
  return RunShell(dir, BinaryPath("aevatar") + " " + args);
}

TEST(AevatarBackup, ARestoreHoldsExactlyTheWorkAcceptedBeforeTheBackup) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  const std::string backup = dir.path() + "/backup";
  const std::vector<std::string> up_argv = {
      BinaryPath("aevatar"), "up",
      "--state-dir",         state,
      "--port-base",         std::to_string(PickFreePortRange(3))};
  const LogsOnFailure logs{{dir.path() + "/up.log", dir.path() + "/up2.log"}};
  AcceptedRun before, after;
  {
    ServiceProcess up(up_argv, dir.path() + "/up.log");
    ASSERT_TRUE(up.ok()) << up.ReadLog();
    const Demo demo = LogIn(state);
    before = RunToCompletion(demo, "before");

    ShellRun taken = Aevatar(dir.path(), "backup --state-dir " + state + " --to " + backup);
    ASSERT_EQ(taken.exit_code, 0) << taken.out << taken.err;
    EXPECT_NE(taken.out.find("aevatar/vault.key"), std::string::npos) << "names the key it skips";
    EXPECT_FALSE(std::filesystem::exists(backup + "/aevatar/vault.key"));

    after = RunToCompletion(demo, "after");
    EXPECT_EQ(OperationRows(state, after.operation_id), "1\n");

    ShellRun refused = Aevatar(dir.path(), "restore --from " + backup + " --state-dir " + state);
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("STATE_DIR_IN_USE"), std::string::npos) << refused.err;
    EXPECT_EQ(up.Terminate(), 0);
  }

  // A copy of the backup with one byte of one database changed is refused.
  // The byte is flipped, not overwritten: whatever it held, it now differs.
  const std::string tampered = dir.path() + "/tampered";
  std::filesystem::copy(backup, tampered, std::filesystem::copy_options::recursive);
  {
    std::fstream db(tampered + "/aevatar/workflows.db",
                    std::ios::in | std::ios::out | std::ios::binary);
    constexpr std::streamoff kOffset = 4096 + 100;
    char byte = 0;
    db.seekg(kOffset);
    ASSERT_TRUE(db.get(byte)) << "the copied workflows.db is shorter than two pages";
    db.seekp(kOffset);
    db.put(static_cast<char>(byte ^ 0x5a));
  }
  ShellRun bad = Aevatar(dir.path(), "restore --from " + tampered + " --state-dir " + state);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("BACKUP_DIGEST_MISMATCH"), std::string::npos) << bad.err;
  EXPECT_EQ(OperationRows(state, after.operation_id), "1\n") << "a refused restore changed state";

  ShellRun restored = Aevatar(dir.path(), "restore --from " + backup + " --state-dir " + state);
  ASSERT_EQ(restored.exit_code, 0) << restored.out << restored.err;
  EXPECT_EQ(OperationRows(state, before.operation_id), "1\n");
  EXPECT_EQ(OperationRows(state, after.operation_id), "0\n");

  ServiceProcess again(up_argv, dir.path() + "/up2.log");
  ASSERT_TRUE(again.ok()) << again.ReadLog();
  const Demo demo = LogIn(state);
  const json run =
      JsonOf(Call("GET", demo.aevatar_url + "/api/workflow-runs/" + before.run_id, demo.token));
  EXPECT_EQ(run.value("status", ""), "succeeded") << run.dump();
  ASSERT_TRUE(run.contains("steps") && !run["steps"].empty()) << run.dump();
  EXPECT_EQ(run["steps"][0]["output"]["stdout"], "before\n");
  EXPECT_EQ(Call("GET", demo.aevatar_url + "/api/workflow-runs/" + after.run_id, demo.token).status,
            404);
  // The restored stack takes new work.
  const AcceptedRun next = RunToCompletion(demo, "next");
  EXPECT_EQ(OperationRows(state, next.operation_id), "1\n");
}

}  // namespace
}  // namespace aevatar::testing
