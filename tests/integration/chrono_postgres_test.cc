// chrono-sandbox on PostgreSQL: the real binary with --store on a private
// cluster (tests/testing/postgres_cluster.h), two instances sharing one
// database, and an unreachable database at start.
#include "chrono_client.h"
#include "chrono_replica_set.h"
#include "gtest/gtest.h"
#include "testing/loopback_port.h"
#include "testing/postgres_test_database.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

TEST(ChronoOnPostgres, TwoInstancesOnOneDatabaseShareOperationsAndIdempotency) {
  SKIP_WITHOUT_POSTGRES();
  const std::string url = SharedPostgresCluster().CreateDatabase();
  ASSERT_FALSE(url.empty()) << SharedPostgresCluster().error();
  ChronoFixture a({"--store", url});
  ASSERT_TRUE(a.ok());
  ChronoFixture b({"--store", "postgres:" + url});
  ASSERT_TRUE(b.ok());

  const nlohmann::json body = {{"language", "bash"}, {"script", "echo on-postgres"}};
  const http::ClientResponse first = a.Submit(body, "pg-key");
  ASSERT_EQ(first.status, 202) << first.body;
  const std::string id = BodyJson(first).value("operation_id", "");
  ASSERT_FALSE(id.empty());
  // The same key on the other instance is the same operation.
  const http::ClientResponse again = b.Submit(body, "pg-key");
  EXPECT_EQ(BodyJson(again).value("operation_id", ""), id) << again.body;
  // Whichever instance ran it, both read the result.
  const nlohmann::json done = b.WaitDone(id);
  EXPECT_EQ(done["status"], "succeeded") << done.dump();
  EXPECT_EQ(a.WaitDone(id)["status"], "succeeded");
  // Another owner sees nothing, on either instance.
  EXPECT_EQ(a.Call("GET", "/executions/" + id, "", "mallory").status, 404);
  // Committed: a restarted instance still has it.
  a.Restart();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.WaitDone(id)["status"], "succeeded");
}

TEST(ChronoOnPostgres, AnUnreachableDatabaseAtStartIsAClearErrorAndExitsNonZero) {
  TempDir dir;
  TestIssuer issuer;
  issuer.WriteJwks(dir.path() + "/jwks.json");
  const uint16_t closed_port = FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed_port, 0);
  const ShellRun run = RunShell(
      dir.path(), "timeout 60 " + BinaryPath("chrono-sandbox") + " serve --listen 127.0.0.1:0" +
                      " --state-dir " + dir.path() + "/state --jwks-file " + dir.path() +
                      "/jwks.json --store postgresql://chrono:s3cret-pw@127.0.0.1:" +
                      std::to_string(closed_port) + "/chrono");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 124) << "it hung instead of failing";
  EXPECT_NE(run.err.find("cannot connect to PostgreSQL"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(std::to_string(closed_port)), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("s3cret-pw"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace aevatar::testing
