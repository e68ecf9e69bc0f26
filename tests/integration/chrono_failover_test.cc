// chrono-sandbox replicas losing a peer or their database under load (real
// binaries, a private PostgreSQL cluster): `kill -9` of one replica with
// hundreds of operations in flight, and the database restarted while both
// replicas accept and run work. Every accepted operation must reach a
// terminal state, none may be lost, none may run twice. A run is counted by
// its replica's "operation.started" log line, written right before the
// program starts.
#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "chrono_replica_set.h"
#include "gtest/gtest.h"
#include "testing/postgres_test_database.h"

namespace aevatar::testing {
namespace {

// How many times each id appears in `ids`.
std::map<std::string, int> Tally(const std::vector<std::string>& ids) {
  std::map<std::string, int> counts;
  for (const std::string& id : ids) ++counts[id];
  return counts;
}

int CountOf(const std::map<std::string, int>& tally, const std::string& id) {
  auto it = tally.find(id);
  return it == tally.end() ? 0 : it->second;
}

// The program submitted under `key` (a retry must send the same one).
nlohmann::json LoadBody(const std::string& key) {
  return {{"language", "bash"}, {"script", "echo " + key}};
}

// Submits `count` short programs from `threads` threads, spread over
// `replicas` in turn; returns the ids accepted with 202. Keys are
// "<prefix>-<i>".
std::vector<std::string> SubmitShort(const std::vector<ChronoFixture*>& replicas,
                                     const std::string& prefix, int count, int threads) {
  absl::Mutex mu;
  std::vector<std::string> accepted;
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        const std::string key = prefix + "-" + std::to_string(i);
        const http::ClientResponse r = replicas[i % replicas.size()]->Submit(LoadBody(key), key);
        absl::MutexLock lock(&mu);
        if (r.status == 202) accepted.push_back(BodyJson(r).value("operation_id", ""));
      }
    });
  }
  for (std::thread& t : workers) t.join();
  return accepted;
}

TEST(ChronoFailover, AKilledReplicasWorkIsFinishedOrSettledByTheSurvivorNoneRunTwice) {
  SKIP_WITHOUT_POSTGRES();
  ReplicaSet set;
  ASSERT_TRUE(set.ok()) << SharedPostgresCluster().error();
  // a runs two long sleepers (they must be a's: b does not exist yet) and
  // has one more worker for the short ones.
  std::unique_ptr<ChronoFixture> a = set.Start("a", 3);
  ASSERT_TRUE(a->ok());
  std::vector<std::string> sleepers;
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json body = {
        {"language", "bash"}, {"script", "sleep 500"}, {"timeout_secs", 600}};
    const http::ClientResponse r = a->Submit(body, "sleeper-" + std::to_string(i));
    ASSERT_EQ(r.status, 202) << r.body;
    sleepers.push_back(BodyJson(r).value("operation_id", ""));
  }
  ASSERT_TRUE(PollUntil([&] { return StartedIds(a->service()).size() == 2; }));
  std::unique_ptr<ChronoFixture> b = set.Start("b", 2);
  ASSERT_TRUE(b->ok());

  std::vector<std::string> accepted = SubmitShort({a.get(), b.get()}, "short", 200, 8);
  ASSERT_EQ(accepted.size(), 200u);
  // Kill a while it is still taking short ones (most are still queued or running).
  ASSERT_TRUE(PollUntil([&] { return StartedIds(a->service()).size() >= 2 + 5; },
                        std::chrono::seconds(120)));
  a->service().KillHard();
  accepted.insert(accepted.end(), sleepers.begin(), sleepers.end());

  // b settles a's runs once their leases lapse and runs everything queued.
  std::map<std::string, std::string> status;
  for (const std::string& id : accepted) {
    const nlohmann::json doc = b->WaitDone(id, 180);
    ASSERT_TRUE(doc.value("done", false)) << id << ": " << doc.dump();
    status[id] = doc.value("status", "");
  }
  const std::vector<std::string> a_started = StartedIds(a->service());
  const std::map<std::string, int> on_a = Tally(a_started);
  const std::map<std::string, int> on_b = Tally(StartedIds(b->service()));
  const std::map<std::string, int> finished_on_a = Tally(FinishedIds(a->service()));
  int uncertain = 0;
  for (const std::string& id : accepted) {
    const int runs = CountOf(on_a, id) + CountOf(on_b, id);
    EXPECT_LE(runs, 1) << id << " ran twice";
    if (status[id] == "succeeded") {
      EXPECT_EQ(runs, 1) << id;
    } else {
      // Only a's unfinished runs (or a claim a took and died before
      // starting) are uncertain; the survivor never runs them.
      EXPECT_EQ(status[id], "outcome_uncertain") << id;
      EXPECT_EQ(CountOf(on_b, id), 0) << id;
      EXPECT_EQ(CountOf(finished_on_a, id), 0) << id;
      ++uncertain;
    }
    // Whatever b ran, it finished.
    if (CountOf(on_b, id) == 1) {
      EXPECT_EQ(status[id], "succeeded") << id;
    }
  }
  for (const std::string& id : sleepers) EXPECT_EQ(status[id], "outcome_uncertain") << id;
  for (const std::string& id : a_started) {
    if (CountOf(finished_on_a, id) == 0) {
      EXPECT_EQ(status[id], "outcome_uncertain") << id;
    }
  }
  EXPECT_GE(uncertain, 2);
  EXPECT_TRUE(b->service().WaitForLog("\"event\":\"operations.lease_expired\""));
  EXPECT_EQ(set.CountOperations(), static_cast<int64_t>(accepted.size()));
}

TEST(ChronoFailover, TheDatabaseRestartedUnderLoadLosesNoAcceptedOperation) {
  SKIP_WITHOUT_POSTGRES();
  ReplicaSet set;
  ASSERT_TRUE(set.ok()) << SharedPostgresCluster().error();
  std::unique_ptr<ChronoFixture> a = set.Start("a", 2);
  std::unique_ptr<ChronoFixture> b = set.Start("b", 2);
  ASSERT_TRUE(a->ok() && b->ok());

  // Two clients submit to a and to b in turn until told to stop.
  absl::Mutex mu;
  std::vector<std::string> accepted;
  std::vector<std::pair<int, std::string>> refused;  // status, key
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; !stop; ++i) {
        const std::string key = "load-" + std::to_string(c) + "-" + std::to_string(i);
        const http::ClientResponse r = (i % 2 == 0 ? a : b)->Submit(LoadBody(key), key);
        absl::MutexLock lock(&mu);
        if (r.status == 202) {
          accepted.push_back(BodyJson(r).value("operation_id", ""));
        } else {
          refused.emplace_back(r.status, key);
        }
      }
    });
  }
  auto accepted_count = [&] {
    absl::MutexLock lock(&mu);
    return accepted.size();
  };
  // Restart once work is accepted and running.
  ASSERT_TRUE(PollUntil([&] {
    return accepted_count() >= 20 &&
           (!StartedIds(a->service()).empty() || !StartedIds(b->service()).empty());
  }));
  const size_t before_restart = accepted_count();
  const bool restarted = SharedPostgresCluster().Restart();
  // Both replicas reconnect: the clients' submissions to each are accepted again.
  const bool resumed =
      PollUntil([&] { return accepted_count() >= before_restart + 40; }, std::chrono::seconds(120));
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(restarted) << SharedPostgresCluster().error();
  ASSERT_TRUE(resumed);
  // A submission cut by the restart is refused as a server-side failure the
  // client may retry, never as a client error.
  // Such a client retries with the same key. Its first try may have been
  // committed with only the answer lost: the retry converges on that one.
  for (const auto& [http_status, key_binding] : refused) {
    EXPECT_GE(http_status, 500) << http_status;
    const std::string& key = key_binding;  // a lambda cannot capture a binding (clang 14)
    std::string id;
    ASSERT_TRUE(PollUntil([&] {
      const http::ClientResponse r = a->Submit(LoadBody(key), key);
      if (r.status == 200 || r.status == 202) id = BodyJson(r).value("operation_id", "");
      return !id.empty();
    })) << key;
    accepted.push_back(id);
  }

  std::map<std::string, std::string> status;
  for (const std::string& id : accepted) {
    const nlohmann::json doc = a->WaitDone(id, 180);
    ASSERT_TRUE(doc.value("done", false)) << id << ": " << doc.dump();
    status[id] = doc.value("status", "");
  }
  const std::map<std::string, int> started_a = Tally(StartedIds(a->service()));
  const std::map<std::string, int> started_b = Tally(StartedIds(b->service()));
  const std::map<std::string, int> unrecorded_a = Tally(FinishFailedIds(a->service()));
  const std::map<std::string, int> unrecorded_b = Tally(FinishFailedIds(b->service()));
  int succeeded = 0;
  for (const std::string& id : accepted) {
    const int runs = CountOf(started_a, id) + CountOf(started_b, id);
    EXPECT_LE(runs, 1) << id << " ran twice";
    if (status[id] == "succeeded") {
      ++succeeded;
      EXPECT_EQ(runs, 1) << id;
    } else {
      // Uncertain, and never run: a claim whose commit the restart cut. Or
      // run once, when the restart outlasted the run's lease: its runner
      // could not record the outcome (a loaded host's restart can take that
      // long), and says so.
      EXPECT_EQ(status[id], "outcome_uncertain") << id;
      const bool unrecorded = CountOf(unrecorded_a, id) + CountOf(unrecorded_b, id) > 0;
      EXPECT_EQ(runs, unrecorded ? 1 : 0) << id;
    }
  }
  EXPECT_GT(succeeded, 0);
  // Exactly one operation per key: none lost, none doubled by a retry.
  EXPECT_EQ(set.CountOperations(), static_cast<int64_t>(accepted.size()));
  std::sort(accepted.begin(), accepted.end());
  EXPECT_EQ(std::adjacent_find(accepted.begin(), accepted.end()), accepted.end());
}

}  // namespace
}  // namespace aevatar::testing
