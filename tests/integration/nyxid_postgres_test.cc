// nyxid on PostgreSQL: two real `nyxid serve` replicas on one database of a
// private cluster (tests/testing/postgres_cluster.h) behave as one broker —
// tokens, signing-key rotation, revocations and routes made at one are
// honoured by the other — and an unreachable database stops start-up.
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "gtest/gtest.h"
#include "nyxid/proxy/recording_upstream.h"
#include "nyxid_fixture.h"
#include "testing/loopback_port.h"
#include "testing/postgres_test_database.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

constexpr char kPassword[] = "alice-pg-password-4410";

std::string Bootstrap(const std::string& upstream_url) {
  return std::string(R"yaml(
users:
  - {username: alice, password: ")yaml") +
         kPassword + R"yaml(", platform_admin: true}
catalog:
  - id: cat_echo
    slug: echo
    name: Echo
    base_url: )yaml" +
         upstream_url + R"yaml(
    default_policy:
      forward_access_token: false
      inject_delegation_token: false
)yaml";
}

// The kids of a JWKS response ("" entries when it is not one), in order.
std::vector<std::string> Kids(const http::ClientResponse& response) {
  std::vector<std::string> kids;
  auto jwks = base::Jwks::Parse(response.body);
  if (!jwks.ok()) return {""};
  for (const base::Jwk& key : jwks->keys()) kids.push_back(key.kid);
  return kids;
}

// Polls `read` until it returns `want` or a generous deadline (a loaded
// machine) passes; returns the last value read.
template <typename T, typename Read>
T PollUntilEqual(const T& want, Read read) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  T got = read();
  while (got != want && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    got = read();
  }
  return got;
}

TEST(NyxidOnPostgres, TwoReplicasOnOneDatabaseActAsOneBroker) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  ASSERT_FALSE(url.empty()) << SharedPostgresCluster().error();
  RecordingUpstream upstream;

  NyxidFixture a(Bootstrap(upstream.url()), {"--store", url});
  ASSERT_TRUE(a.ok()) << a.service().ReadLog();
  // A replica with its own at-rest key cannot open the shared signing keys:
  // it refuses to start and says which file to share.
  NyxidFixture b(Bootstrap(upstream.url()), {"--store", url});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.service().ReadLog().find("at-rest.key"), std::string::npos) << b.service().ReadLog();
  std::filesystem::copy_file(a.dir() + "/state/at-rest.key", b.dir() + "/state/at-rest.key",
                             std::filesystem::copy_options::overwrite_existing);
  b.Restart({"--store", url});
  ASSERT_TRUE(b.ok()) << b.service().ReadLog();

  // A token issued by A is accepted by B; both publish one JWKS.
  const std::string token = a.Login("alice", kPassword);
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(b.Call("GET", "/api/v1/me", token).status, 200);
  const std::vector<std::string> before = Kids(a.Call("GET", "/.well-known/jwks.json", ""));
  EXPECT_EQ(Kids(b.Call("GET", "/.well-known/jwks.json", "")), before);

  // A rotation at A: B's JWKS follows within the refresh bound (2 s), and a
  // token A signs with the new key is accepted by B at once.
  auto rotated = a.Call("POST", "/api/v1/admin/signing-keys/rotate", token);
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string new_kid = JsonOf(rotated).value("kid", "");
  const std::vector<std::string> after = Kids(a.Call("GET", "/.well-known/jwks.json", ""));
  ASSERT_NE(after, before);
  ASSERT_EQ(after.front(), new_kid);
  EXPECT_EQ(
      PollUntilEqual(after, [&] { return Kids(b.Call("GET", "/.well-known/jwks.json", "")); }),
      after);
  const std::string fresh = a.Login("alice", kPassword);
  EXPECT_EQ(b.Call("GET", "/api/v1/me", fresh).status, 200);

  // A route created at A is served by B's proxy.
  auto created = a.Call("POST", "/api/v1/user-services", fresh,
                        R"({"catalog_service_id":"cat_echo","slug":"echo-a","label":"Echo A"})");
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string route = JsonOf(created).value("id", "");
  auto proxied = b.Call("GET", "/api/v1/proxy/echo-a/hello-from-b?_nyxid_via=" + route, fresh);
  EXPECT_EQ(proxied.status, 200) << proxied.body;
  std::vector<RecordedRequest> seen = upstream.Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].target.find("/hello-from-b"), std::string::npos) << seen[0].target;

  // An Agent Key revoked at A is refused by B on its next request (B
  // caches no credential state).
  nlohmann::json key = a.CreateAgentKey(fresh, "replica-key");
  const std::string agent_key = key.value("key", "");
  ASSERT_FALSE(agent_key.empty()) << key.dump();
  EXPECT_EQ(b.Call("GET", "/api/v1/me", agent_key).status, 200);
  ASSERT_EQ(a.Call("DELETE", "/api/v1/agent-keys/" + key.value("id", ""), fresh).status, 204);
  ExpectProblem(b.Call("GET", "/api/v1/me", agent_key), 401, "AGENT_KEY_REVOKED");

  // A logout at A revokes alice's tokens at B too.
  ASSERT_EQ(a.Call("POST", "/api/v1/auth/logout", fresh).status, 204);
  ExpectProblem(b.Call("GET", "/api/v1/me", fresh), 401, "TOKEN_REVOKED");
  ExpectProblem(b.Call("GET", "/api/v1/me", token), 401, "TOKEN_REVOKED");
}

TEST(NyxidOnPostgres, ReplicasStartingAtOnceWithOneBootstrapAllStart) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  ASSERT_FALSE(url.empty()) << SharedPostgresCluster().error();
  // One at-rest key, given to every replica before it starts (as an operator does).
  const std::string at_rest_key = base::RandomBytes(32);
  constexpr int kReplicas = 3;
  std::vector<std::unique_ptr<TempDir>> dirs;
  for (int i = 0; i < kReplicas; ++i) {
    dirs.push_back(std::make_unique<TempDir>());
    std::filesystem::create_directory(dirs[i]->path() + "/state");
    std::filesystem::permissions(dirs[i]->path() + "/state", std::filesystem::perms::owner_all);
    const std::string key_path = dirs[i]->path() + "/state/at-rest.key";
    std::ofstream(key_path, std::ios::binary) << at_rest_key;
    std::filesystem::permissions(
        key_path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(dirs[i]->path() + "/bootstrap.yaml") << Bootstrap("http://127.0.0.1:9");
  }
  std::vector<std::unique_ptr<ServiceProcess>> replicas(kReplicas);
  std::vector<std::thread> starts;
  for (int i = 0; i < kReplicas; ++i) {
    starts.emplace_back([&, i] {
      const std::string& dir = dirs[i]->path();
      replicas[i] = std::make_unique<ServiceProcess>(
          std::vector<std::string>{BinaryPath("nyxid"), "serve", "--listen", "127.0.0.1:0",
                                   "--state-dir", dir + "/state", "--bootstrap",
                                   dir + "/bootstrap.yaml", "--store", url},
          dir + "/nyxid.log");
    });
  }
  for (std::thread& start : starts) start.join();
  for (const auto& replica : replicas) ASSERT_TRUE(replica->ok()) << replica->ReadLog();
  // One account, one signing key set: every replica publishes the same JWKS.
  std::vector<std::vector<std::string>> published;
  for (const auto& replica : replicas) {
    http::ClientRequest request;
    request.url = replica->base_url() + "/.well-known/jwks.json";
    auto jwks = http::Fetch(request);
    ASSERT_TRUE(jwks.ok()) << jwks.status();
    published.push_back(Kids(*jwks));
  }
  for (const auto& kids : published) EXPECT_EQ(kids, published[0]);
}

TEST(NyxidOnPostgres, AnUnreachableDatabaseAtStartIsAClearErrorAndExitsNonZero) {
  TempDir dir;
  const uint16_t closed_port = FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  const ShellRun run =
      RunShell(dir.path(), "timeout 60 " + BinaryPath("nyxid") + " serve --listen 127.0.0.1:0" +
                               " --state-dir " + dir.path() + "/state" +
                               " --store postgresql://nyxid:s3cret-pw@127.0.0.1:" +
                               std::to_string(closed_port) + "/nyxid");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 124) << "it hung instead of failing";
  EXPECT_NE(run.err.find("cannot connect to PostgreSQL"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(std::to_string(closed_port)), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("s3cret-pw"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("listening"), std::string::npos) << run.out;
}

TEST(NyxidOnPostgres, AStoreOtherThanPostgresIsRefusedAtStart) {
  TempDir dir;
  const ShellRun run = RunShell(dir.path(), "timeout 60 " + BinaryPath("nyxid") +
                                                " serve --listen 127.0.0.1:0 --state-dir " +
                                                dir.path() + "/state --store mysql://db/nyxid");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 124) << "it hung instead of failing";
  EXPECT_NE(run.err.find("--store must be postgresql://"), std::string::npos) << run.err;
}

TEST(NyxidOnPostgres, TheConfigFileKeyStoreNamesTheDatabase) {
  TempDir dir;
  const uint16_t closed_port = FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  std::ofstream(dir.path() + "/nyxid.toml")
      << "listen = \"127.0.0.1:0\"\nstate-dir = \"" << dir.path() << "/state\"\n"
      << "store = \"postgresql://nyxid@127.0.0.1:" << closed_port << "/nyxid\"\n";
  const ShellRun run = RunShell(dir.path(), "timeout 60 " + BinaryPath("nyxid") +
                                                " serve --config " + dir.path() + "/nyxid.toml");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 124) << "it hung instead of failing";
  // The file's store was used: start-up tried that database, not SQLite.
  EXPECT_NE(run.err.find("cannot connect to PostgreSQL"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(std::to_string(closed_port)), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/state/nyxid.db"));
}

}  // namespace
}  // namespace aevatar::testing
