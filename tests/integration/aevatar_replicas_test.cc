// aevatar on PostgreSQL: two `aevatar serve` replicas (beside one nyxid and
// one chrono-sandbox) sharing one database on a private cluster
// (tests/testing/postgres_cluster.h); one is killed with -9 while twenty
// workflow runs are in flight, and the other finishes every run, each step
// executed once. And an unreachable database at start.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "aevatar_stack.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "store/pg_pool.h"
#include "testing/loopback_port.h"
#include "testing/postgres_test_database.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kReplicaUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";

constexpr int kRuns = 20;
constexpr int kStepsPerRun = 2;
// Short, so the takeover comes soon after the kill; the renewals (every
// third of it) keep a live replica's runs its own.
constexpr char kLeaseMs[] = "3000";

// Two steps that each take a moment, so that runs are mid-step when a
// replica dies.
std::string TwoStepWorkflow(int i) {
  std::string yaml = "workflow_id: replicas-" + std::to_string(i) + "\nsteps:\n";
  for (int s = 0; s < kStepsPerRun; ++s) {
    yaml += "  - id: step" + std::to_string(s) +
            "\n    tool: code_execute\n    arguments:\n      language: bash\n"
            "      timeout_secs: 60\n      source: |\n        sleep 1\n        echo RUN_" +
            std::to_string(i) + "_STEP_" + std::to_string(s) + "\n";
  }
  return yaml;
}

// The runs `replica` holds a lease on, read from the shared database.
std::set<std::string> RunsLeasedBy(store::PgPool& db, const std::string& replica) {
  std::set<std::string> runs;
  absl::Status read = db.Transact([&](pqxx::work& tx) {
    for (const auto& row : tx.exec_params(
             "SELECT run_id FROM aevatar_runs WHERE lease_owner = $1 AND lease_until_ms > 0",
             replica)) {
      runs.insert(row[0].as<std::string>());
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(read.ok()) << read;
  return runs;
}

// How many times `needle` occurs in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(AevatarReplicas, AKilledReplicasRunsAreFinishedByTheOtherEachStepExecutedOnce) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  ASSERT_FALSE(url.empty()) << SharedPostgresCluster().error();
  TempDir keys;  // the replicas share the vault key, outside their state dirs
  const std::string key_file = keys.path() + "/vault.key";
  {
    std::ofstream out(key_file, std::ios::binary);
    out << base::RandomBytes(32);
  }
  ASSERT_EQ(::chmod(key_file.c_str(), 0600), 0);
  auto replica_args = [&](const std::string& id) {
    return std::vector<std::string>{"--store",        url,      "--replica-id",     id,
                                    "--run-lease-ms", kLeaseMs, "--vault-key-file", key_file};
  };
  AevatarStackOptions options;
  options.users_yaml = kReplicaUsers;
  options.aevatar_args = replica_args("replica-a");
  AevatarStack stack(std::move(options));
  ASSERT_TRUE(stack.ok());
  std::vector<std::string> argv = {BinaryPath("aevatar"),
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--state-dir",
                                   stack.dir() + "/aevatar-b",
                                   "--nyxid-url",
                                   stack.nyxid().url(),
                                   "--introspection-secret-file",
                                   stack.dir() + "/introspection.secret"};
  for (const std::string& arg : replica_args("replica-b")) argv.push_back(arg);
  ServiceProcess replica_b(argv, stack.dir() + "/aevatar-b.log");
  ASSERT_TRUE(replica_b.ok());
  const std::string token = stack.Login("alice");
  ASSERT_FALSE(token.empty());
  auto call_b = [&](const std::string& method, const std::string& path,
                    const std::string& body = "") {
    http::ClientRequest request;
    request.method = method;
    request.url = replica_b.base_url() + path;
    request.timeout = std::chrono::seconds(120);
    request.headers.Set("Authorization", "Bearer " + token);
    if (!body.empty()) request.headers.Set("Content-Type", "application/json");
    request.body = body;
    auto response = http::Fetch(request);
    if (!response.ok())
      return http::ClientResponse{0, {}, std::string(response.status().message())};
    return *response;
  };

  // Runs started on both replicas.
  std::vector<std::string> run_ids;
  for (int i = 0; i < kRuns; ++i) {
    const std::string body = json{{"workflow_yaml", TwoStepWorkflow(i)}, {"wait", "none"}}.dump();
    const http::ClientResponse r = i % 2 == 0
                                       ? stack.Aevatar("POST", "/api/workflow-runs", token, body)
                                       : call_b("POST", "/api/workflow-runs", body);
    ASSERT_EQ(r.status, 202) << r.body;
    run_ids.push_back(json::parse(r.body, nullptr, false).value("run_id", ""));
    ASSERT_FALSE(run_ids.back().empty());
  }
  // Mid-turn: replica a is frozen (SIGSTOP) at a moment it holds leases
  // (turns under way), then killed; frozen, it cannot release them between
  // the look and the kill.
  auto db = store::PgPool::Connect(url, 1);
  ASSERT_TRUE(db.ok()) << db.status();
  const pid_t replica_a = stack.aevatar().pid();
  std::set<std::string> orphaned;
  for (int i = 0; i < 1200 && orphaned.empty(); ++i) {
    ASSERT_EQ(::kill(replica_a, SIGSTOP), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the stop lands
    orphaned = RunsLeasedBy(**db, "replica-a");
    if (orphaned.empty()) {
      ::kill(replica_a, SIGCONT);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  stack.aevatar().KillHard();  // its leases stay behind, unreleased
  ASSERT_FALSE(orphaned.empty()) << "replica a held no lease when it died";

  // Every run, whichever replica started it, finishes on replica b.
  std::map<std::string, json> finished;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
  while (finished.size() < run_ids.size() && std::chrono::steady_clock::now() < deadline) {
    for (const std::string& id : run_ids) {
      if (finished.count(id)) continue;
      const http::ClientResponse r = call_b("GET", "/api/workflow-runs/" + id);
      ASSERT_EQ(r.status, 200) << id << ": " << r.body;  // never lost
      const json run = json::parse(r.body, nullptr, false);
      if (run.value("done", false)) finished[id] = run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(finished.size(), run_ids.size()) << "runs left unfinished";
  // The dead replica's runs were taken over: none is still leased to it.
  EXPECT_TRUE(RunsLeasedBy(**db, "replica-a").empty());
  for (const std::string& id : orphaned) EXPECT_TRUE(finished.count(id)) << id;
  std::set<std::string> operations;
  for (const auto& [id, run] : finished) {
    EXPECT_EQ(run.value("status", ""), "succeeded") << run.dump();
    // Every step's submissions carry one operation: a replayed turn reused
    // the committed idempotency key, so chrono-sandbox made no second one.
    const json events =
        json::parse(call_b("GET", "/api/workflow-runs/" + id + "/events").body, nullptr, false)
            .value("events", json::array());
    std::map<std::string, std::set<std::string>> per_step;
    for (const json& event : events) {
      if (event.value("type", "") != "step.submitted") continue;
      const json& data = event["data"];
      per_step[data.value("step_id", "")].insert(data.value("operation_id", ""));
    }
    for (const auto& [step, ids] : per_step) {
      EXPECT_EQ(ids.size(), 1u) << id << " step " << step << " ran as several operations";
      operations.insert(ids.begin(), ids.end());
    }
  }
  EXPECT_EQ(operations.size(), static_cast<size_t>(kRuns * kStepsPerRun));
  // The executor's side-effect marker: each step's program ran exactly once.
  const std::string chrono_log = stack.chrono().ReadLog();
  EXPECT_EQ(Count(chrono_log, "\"operation.finished\""), static_cast<size_t>(kRuns * kStepsPerRun));
}

TEST(AevatarReplicas, AnUnreachableDatabaseAtStartIsAClearErrorAndExitsNonZero) {
  TempDir dir;
  const uint16_t closed_port = FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  const ShellRun run =
      RunShell(dir.path(), "timeout 60 " + BinaryPath("aevatar") +
                               " serve --listen 127.0.0.1:0 --state-dir " + dir.path() +
                               "/state --nyxid-url http://127.0.0.1:1 "
                               "--store postgresql://aevatar:s3cret-pw@127.0.0.1:" +
                               std::to_string(closed_port) + "/aevatar");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 124) << "it hung instead of failing";
  EXPECT_NE(run.err.find("cannot connect to PostgreSQL"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(std::to_string(closed_port)), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("s3cret-pw"), std::string::npos) << run.err;
}

TEST(AevatarReplicas, AStoreThatIsNeitherSqliteNorPostgresIsRefused) {
  TempDir dir;
  const ShellRun run =
      RunShell(dir.path(), "timeout 60 " + BinaryPath("aevatar") +
                               " serve --listen 127.0.0.1:0 --state-dir " + dir.path() +
                               "/state --nyxid-url http://127.0.0.1:1 --store mysql://db/x");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("--store must be"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace aevatar::testing
