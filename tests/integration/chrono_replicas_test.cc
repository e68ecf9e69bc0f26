// Two chrono-sandbox replicas on one PostgreSQL database (real binaries, a
// private cluster): idempotency under concurrency across replicas, a cancel
// accepted by one replica stopping the program running on the other, status
// and ETag/304 from either, and the shared sealing key's start-up checks.
#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "chrono_replica_set.h"
#include "gtest/gtest.h"
#include "testing/postgres_test_database.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

bool Contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(ChronoReplicas, FiftyConcurrentSameKeySubmitsOverTwoReplicasMakeOneOperation) {
  SKIP_WITHOUT_POSTGRES();
  ReplicaSet set;
  ASSERT_TRUE(set.ok()) << SharedPostgresCluster().error();
  std::unique_ptr<ChronoFixture> replicas[] = {set.Start("a", 2), set.Start("b", 2)};
  ASSERT_TRUE(replicas[0]->ok() && replicas[1]->ok());

  const nlohmann::json body = {{"language", "bash"}, {"script", "echo once"}};
  constexpr int kCallers = 50;
  std::vector<int> statuses(kCallers);
  std::vector<std::string> ids(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      const http::ClientResponse r = replicas[i % 2]->Submit(body, "one-key-two-replicas");
      statuses[i] = r.status;
      ids[i] = BodyJson(r).value("operation_id", "");
    });
  }
  for (std::thread& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i) EXPECT_EQ(statuses[i], 202) << i;
  const std::set<std::string> distinct(ids.begin(), ids.end());
  ASSERT_EQ(distinct.size(), 1u);
  const std::string id = *distinct.begin();
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(replicas[1]->WaitDone(id)["status"], "succeeded");
  EXPECT_EQ(set.CountOperations(), 1);
  // Its program ran once, on one of the two.
  const std::vector<std::string> on_a = StartedIds(replicas[0]->service());
  const std::vector<std::string> on_b = StartedIds(replicas[1]->service());
  const auto runs =
      std::count(on_a.begin(), on_a.end(), id) + std::count(on_b.begin(), on_b.end(), id);
  EXPECT_EQ(runs, 1);
}

TEST(ChronoReplicas, ACancelOnOneReplicaStopsTheProgramRunningOnTheOther) {
  SKIP_WITHOUT_POSTGRES();
  ReplicaSet set;
  ASSERT_TRUE(set.ok()) << SharedPostgresCluster().error();
  std::unique_ptr<ChronoFixture> a = set.Start("a", 1);
  ASSERT_TRUE(a->ok());
  const nlohmann::json body = {
      {"language", "bash"}, {"script", "sleep 500"}, {"timeout_secs", 600}};
  const http::ClientResponse accepted = a->Submit(body, "long-sleeper");
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = BodyJson(accepted).value("operation_id", "");
  // Running on a before b exists, so b cannot be the one running it.
  ASSERT_TRUE(PollUntil([&] { return Contains(StartedIds(a->service()), id); }));
  std::unique_ptr<ChronoFixture> b = set.Start("b", 1);
  ASSERT_TRUE(b->ok());

  const http::ClientResponse cancel = b->Call("POST", "/executions/" + id + "/cancel");
  ASSERT_EQ(cancel.status, 200) << cancel.body;
  const nlohmann::json done = b->WaitDone(id, 120);
  EXPECT_EQ(done["status"], "cancelled") << done.dump();
  EXPECT_TRUE(a->service().WaitForLog("\"event\":\"operation.cancel_relayed\""));
  EXPECT_FALSE(Contains(StartedIds(b->service()), id));

  // Either replica answers for it, with the same ETag: a's tag is b's 304.
  const http::ClientResponse from_a = a->Call("GET", "/executions/" + id);
  ASSERT_EQ(from_a.status, 200) << from_a.body;
  const std::string etag = from_a.headers.Get("ETag").value_or("");
  ASSERT_FALSE(etag.empty());
  const http::ClientResponse from_b =
      b->Call("GET", "/executions/" + id, "", "alice", {{"If-None-Match", etag}});
  EXPECT_EQ(from_b.status, 304) << from_b.body;
  EXPECT_EQ(b->Call("GET", "/executions/" + id + "/result").status, 200);
}

TEST(ChronoReplicas, AnAgentKeySealedByOneReplicaIsUnsealedByTheOtherAndNeverStoredInTheClear) {
  SKIP_WITHOUT_POSTGRES();
  ReplicaSet set;
  ASSERT_TRUE(set.ok()) << SharedPostgresCluster().error();
  std::unique_ptr<ChronoFixture> a = set.Start("a", 1);
  ASSERT_TRUE(a->ok());
  // a's only worker is busy, so the operation below waits in the queue.
  const http::ClientResponse busy =
      a->Submit({{"language", "bash"}, {"script", "sleep 500"}, {"timeout_secs", 600}}, "busy");
  ASSERT_EQ(busy.status, 202) << busy.body;
  const std::string busy_id = BodyJson(busy).value("operation_id", "");
  ASSERT_TRUE(PollUntil([&] { return Contains(StartedIds(a->service()), busy_id); }));

  const std::string agent_key = "nyxid_ag_replica_test_0123456789";
  const nlohmann::json body = {
      {"language", "bash"},
      {"script", "[ \"$NYXID_API_KEY\" = " + agent_key + " ] && echo key-arrived"}};
  const http::ClientResponse accepted =
      a->Call("POST", "/executions", body.dump(), "alice",
              {{"Idempotency-Key", "agent-key-op"}, {"Authorization", "Bearer " + agent_key}});
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = BodyJson(accepted).value("operation_id", "");
  const std::string stored = set.StoredCredentials(id);
  EXPECT_FALSE(stored.empty());  // queued with its key, sealed
  EXPECT_EQ(stored.find(agent_key), std::string::npos);
  EXPECT_EQ(stored.find("replica_test"), std::string::npos);

  // b, given the same sealing key file, claims and runs it.
  std::unique_ptr<ChronoFixture> b = set.Start("b", 1);
  ASSERT_TRUE(b->ok());
  const nlohmann::json done = b->WaitDone(id, 120);
  EXPECT_EQ(done["status"], "succeeded") << done.dump();
  EXPECT_TRUE(Contains(StartedIds(b->service()), id));
  const nlohmann::json result = BodyJson(b->Call("GET", "/executions/" + id + "/result"));
  EXPECT_EQ(result.value("stdout", ""), "key-arrived\n") << result.dump();
  EXPECT_EQ(set.StoredCredentials(id), "");  // dropped once the operation ended
}

// `chrono-sandbox serve` with `extra` flags, expected to refuse to start.
ShellRun ServeRefusing(const TempDir& dir, const std::string& extra) {
  TestIssuer issuer;
  issuer.WriteJwks(dir.path() + "/jwks.json");
  return RunShell(dir.path(), "timeout 60 " + BinaryPath("chrono-sandbox") +
                                  " serve --listen 127.0.0.1:0 --state-dir " + dir.path() +
                                  "/state --jwks-file " + dir.path() + "/jwks.json " + extra);
}

TEST(ChronoReplicas, AMissingOpenOrShortSealingKeyFileIsRefusedAtStart) {
  TempDir dir;
  const ShellRun made =
      RunShell(dir.path(), "cd " + dir.path() +
                               " && head -c 32 /dev/urandom > open.key && chmod 644 open.key"
                               " && head -c 16 /dev/urandom > short.key && chmod 600 short.key");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // Missing: never made here, where it would differ from the other replicas' key.
  const ShellRun missing = ServeRefusing(dir, "--sealing-key-file " + dir.path() + "/none.key");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("--sealing-key-file"), std::string::npos) << missing.err;
  const ShellRun open = ServeRefusing(dir, "--sealing-key-file " + dir.path() + "/open.key");
  EXPECT_EQ(open.exit_code, 1);
  EXPECT_NE(open.err.find("--sealing-key-file"), std::string::npos) << open.err;
  EXPECT_EQ(open.err.find("No such file"), std::string::npos) << open.err;  // refused for its mode
  const ShellRun short_key = ServeRefusing(dir, "--sealing-key-file " + dir.path() + "/short.key");
  EXPECT_EQ(short_key.exit_code, 1);
  EXPECT_NE(short_key.err.find("exactly 32 bytes"), std::string::npos) << short_key.err;
}

TEST(ChronoReplicas, AnInvalidReplicaIdIsRefusedAtStart) {
  TempDir dir;
  const ShellRun run = ServeRefusing(dir, "--replica-id 'a b/c'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--replica-id"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace aevatar::testing
