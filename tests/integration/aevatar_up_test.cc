// `aevatar up`: the embedded default starts from an empty state directory,
// serves the demo user, and reuses its state on the next start; with
// --store, the three services' state lives in one PostgreSQL database.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "store/pg_pool.h"
#include "testing/metrics_text.h"
#include "testing/poll.h"
#include "testing/postgres_cluster.h"

namespace aevatar::testing {
namespace {

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

http::ClientResponse Post(const std::string& url, const std::string& bearer,
                          const nlohmann::json& body) {
  http::ClientRequest request;
  request.method = "POST";
  request.url = url;
  request.body = body.dump();
  request.timeout = std::chrono::seconds(60);
  request.headers.Set("Content-Type", "application/json");
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  auto response = http::Fetch(request);
  return response.ok() ? *response : http::ClientResponse{};
}

// Logs the demo user in at NyxID and runs one program through aevatar.
std::string RunDemoProgram(const nlohmann::json& credentials) {
  auto login = Post(credentials["nyxid_url"].get<std::string>() + "/api/v1/auth/login", "",
                    {{"username", "demo"}, {"password", credentials["demo"]["password"]}});
  EXPECT_EQ(login.status, 200) << login.body;
  const std::string token = JsonOf(login).value("access_token", "");
  auto run = Post(credentials["aevatar_url"].get<std::string>() + "/api/tools/code_execute", token,
                  {{"language", "python"}, {"source", "print('up and running')"}});
  EXPECT_EQ(run.status, 200) << run.body;
  return JsonOf(run).value("stdout", "");
}

// A number chrono-sandbox logged at its start in `log_path` ("workers",
// "warm_python"); -1: none.
int ChronoStartLogged(const std::string& log_path, const std::string& field) {
  std::ifstream in(log_path);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (entry.is_object() && entry.value("event", "") == "chrono.started") {
      return entry.value(field, -1);
    }
  }
  return -1;
}

// The value of an unlabelled series in the embedded chrono-sandbox's
// /metrics (read as a local scraper: no token); -1 if absent.
double ChronoMetric(const nlohmann::json& credentials, const std::string& name) {
  http::ClientRequest request;
  request.url = credentials.value("chrono_url", "") + "/metrics";
  auto response = http::Fetch(request);
  if (!response.ok() || response->status != 200) return -1;
  return SeriesValue(response->body, name).value_or(-1);
}

TEST(AevatarUp, StartsFromAnEmptyStateDirAndReusesItOnRestart) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  const uint16_t base = PickFreePortRange(3);
  std::vector<std::string> argv = {BinaryPath("aevatar"), "up", "--state-dir", state, "--port-base",
                                   std::to_string(base)};
  std::string first_password;
  {
    ServiceProcess up(argv, dir.path() + "/up.log");
    ASSERT_TRUE(up.ok()) << up.ReadLog();
    EXPECT_EQ(up.port(), base + 2);
    const std::string credentials_path = state + "/credentials.json";
    struct stat st {};
    ASSERT_EQ(::stat(credentials_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    nlohmann::json credentials = ReadJson(credentials_path);
    ASSERT_TRUE(credentials.is_object());
    first_password = credentials["demo"]["password"];
    EXPECT_EQ(RunDemoProgram(credentials), "up and running\n");
    EXPECT_EQ(up.Terminate(), 0);  // Ctrl-C stops cleanly
  }
  EXPECT_EQ(ChronoStartLogged(dir.path() + "/up.log", "workers"),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(ChronoStartLogged(dir.path() + "/up.log", "warm_python"), 0);
  // The operator's concurrency and warm sandboxes reach the embedded
  // chrono-sandbox, and the demo's Python call takes the warm one.
  argv.insert(argv.end(), {"--sandbox-workers", "3", "--warm-python", "1"});
  ServiceProcess again(argv, dir.path() + "/up2.log");
  ASSERT_TRUE(again.ok()) << again.ReadLog();
  EXPECT_EQ(ChronoStartLogged(again.log_path(), "workers"), 3);
  EXPECT_EQ(ChronoStartLogged(again.log_path(), "warm_python"), 1);
  nlohmann::json credentials = ReadJson(state + "/credentials.json");
  EXPECT_EQ(credentials["demo"]["password"], first_password);
  ASSERT_TRUE(
      PollUntil([&] { return ChronoMetric(credentials, "chrono_warm_python_ready") >= 1; }));
  EXPECT_EQ(RunDemoProgram(credentials), "up and running\n");
  EXPECT_EQ(ChronoMetric(credentials, "chrono_warm_python_served_total"), 1);
  // No generated password is ever written to a log.
  for (const std::string& log : {again.ReadLog()}) {
    EXPECT_EQ(log.find(first_password), std::string::npos);
  }
}

TEST(AevatarUp, RefusesSandboxWorkersOutsideItsRange) {
  TempDir dir;
  for (const std::string bad : {"0", "-2", "1025", "many"}) {
    ServiceProcess up(
        {BinaryPath("aevatar"), "up", "--state-dir", dir.path() + "/state", "--port-base",
         std::to_string(PickFreePortRange(3)), "--sandbox-workers", bad},
        dir.path() + "/up" + bad + ".log");
    EXPECT_FALSE(up.ok()) << bad;
    EXPECT_NE(up.ReadLog().find("--sandbox-workers"), std::string::npos) << up.ReadLog();
  }
}

TEST(AevatarUp, WithAStoreKeepsEveryServicesStateInOneDatabase) {
  if (!SharedPostgresCluster().installed()) GTEST_SKIP() << SharedPostgresCluster().error();
  ASSERT_TRUE(SharedPostgresCluster().ok()) << SharedPostgresCluster().error();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  ASSERT_FALSE(url.empty()) << SharedPostgresCluster().error();
  TempDir dir;
  const std::string state = dir.path() + "/state";
  const uint16_t base = PickFreePortRange(3);
  ServiceProcess up({BinaryPath("aevatar"), "up", "--state-dir", state, "--port-base",
                     std::to_string(base), "--store", url},
                    dir.path() + "/up.log");
  ASSERT_TRUE(up.ok()) << up.ReadLog();
  EXPECT_EQ(RunDemoProgram(ReadJson(state + "/credentials.json")), "up and running\n");
  auto db = store::PgPool::Connect(url, 1);
  ASSERT_TRUE(db.ok()) << db.status();
  std::vector<std::string> components;
  ASSERT_TRUE((*db)
                  ->Transact([&](pqxx::work& tx) {
                    for (const auto& row :
                         tx.exec("SELECT component FROM aevatar_schema ORDER BY component")) {
                      components.push_back(row[0].as<std::string>());
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(components, (std::vector<std::string>{
                            "aevatar.approvals", "aevatar.audit", "aevatar.codex", "aevatar.skills",
                            "aevatar.triggers", "aevatar.workflows", "chrono", "nyxid"}));
  // No database left in the state directory.
  EXPECT_FALSE(std::filesystem::exists(state + "/nyxid/nyxid.db"));
  EXPECT_FALSE(std::filesystem::exists(state + "/aevatar/workflows.db"));
  EXPECT_FALSE(std::filesystem::exists(state + "/chrono-sandbox/operations.db"));
}

}  // namespace
}  // namespace aevatar::testing
