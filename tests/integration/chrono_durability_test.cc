// Durability and load behaviour of the executor: crash and restart, the
// bounded queue, concurrent identical submissions, long programs.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "chrono_client.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string OperationId(const http::ClientResponse& r) {
  return BodyJson(r).value("operation_id", "");
}

TEST(ChronoDurability, FiftyConcurrentIdenticalSubmissionsCreateOneOperation) {
  ChronoFixture f;
  ASSERT_TRUE(f.ok());
  nlohmann::json body = {{"language", "bash"}, {"script", "echo once"}};
  std::vector<std::string> ids(50);
  std::vector<int> statuses(50);
  std::vector<std::thread> threads;
  for (int i = 0; i < 50; ++i) {
    threads.emplace_back([&, i] {
      auto r = f.Submit(body, "same-key-50");
      statuses[i] = r.status;
      ids[i] = OperationId(r);
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> distinct(ids.begin(), ids.end());
  for (int status : statuses) EXPECT_EQ(status, 202);
  ASSERT_EQ(distinct.size(), 1u);
  EXPECT_FALSE(distinct.begin()->empty());
  EXPECT_EQ(f.WaitDone(*distinct.begin())["status"], "succeeded");
}

TEST(ChronoDurability, KillNineThenRestartKeepsEveryAcceptedOperation) {
  ChronoFixture f({"--workers", "1"});
  ASSERT_TRUE(f.ok());
  auto finished = f.Submit({{"language", "bash"}, {"script", "echo finished-before"}}, "k-done");
  const std::string done_id = OperationId(finished);
  ASSERT_EQ(f.WaitDone(done_id)["status"], "succeeded");

  auto running =
      f.Submit({{"language", "bash"}, {"script", "sleep 30"}, {"timeout_secs", 60}}, "k-running");
  const std::string running_id = OperationId(running);
  auto queued = f.Submit({{"language", "bash"}, {"script", "echo ran-after-restart"}}, "k-queued");
  const std::string queued_id = OperationId(queued);
  ASSERT_FALSE(running_id.empty());
  ASSERT_FALSE(queued_id.empty());
  ASSERT_TRUE(PollUntil(
      [&] { return BodyJson(f.Call("GET", "/executions/" + running_id))["status"] == "running"; }));
  ASSERT_EQ(BodyJson(f.Call("GET", "/executions/" + queued_id))["status"], "queued");

  f.service().KillHard();
  f.Restart();
  ASSERT_TRUE(f.ok());

  nlohmann::json uncertain = BodyJson(f.Call("GET", "/executions/" + running_id));
  EXPECT_EQ(uncertain["status"], "outcome_uncertain");
  EXPECT_EQ(uncertain["done"], true);
  EXPECT_EQ(f.WaitDone(queued_id)["status"], "succeeded");
  EXPECT_EQ(BodyJson(f.Call("GET", "/executions/" + queued_id + "/result"))["stdout"],
            "ran-after-restart\n");
  nlohmann::json kept = BodyJson(f.Call("GET", "/executions/" + done_id + "/result"));
  EXPECT_EQ(kept["stdout"], "finished-before\n");
  EXPECT_EQ(kept["status"], "succeeded");
  // The same key after the restart converges on the same operation.
  EXPECT_EQ(
      OperationId(f.Submit({{"language", "bash"}, {"script", "echo finished-before"}}, "k-done")),
      done_id);
  nlohmann::json uncertain_result =
      BodyJson(f.Call("GET", "/executions/" + running_id + "/result"));
  EXPECT_EQ(uncertain_result["status"], "outcome_uncertain");
}

TEST(ChronoDurability, BurstPastTheQueueBoundGets429AndEveryAcceptedRunCompletes) {
  ChronoFixture f({"--workers", "1", "--durable-queue-depth", "3"});
  ASSERT_TRUE(f.ok());
  std::vector<std::string> accepted;
  int rejected = 0;
  for (int i = 0; i < 12; ++i) {
    auto r = f.Submit({{"language", "bash"}, {"script", "sleep 0.3; echo " + std::to_string(i)}},
                      "burst-" + std::to_string(i));
    if (r.status == 202) {
      accepted.push_back(OperationId(r));
    } else {
      EXPECT_EQ(r.status, 429) << r.body;
      EXPECT_EQ(BodyJson(r)["code"], "QUEUE_FULL");
      EXPECT_FALSE(r.headers.Get("Retry-After").value_or("").empty());
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GE(accepted.size(), 3u);
  for (const std::string& id : accepted) EXPECT_EQ(f.WaitDone(id)["status"], "succeeded") << id;
}

TEST(ChronoDurability, LongProgramCompletesThroughShortStatusReads) {
  ChronoFixture f;
  ASSERT_TRUE(f.ok());
  auto submit = f.Submit({{"language", "python"},
                          {"script", "import time\ntime.sleep(21)\nprint('AEVATAR_DURABLE_OK')"},
                          {"timeout_secs", 60}},
                         "long-running");
  ASSERT_EQ(submit.status, 202);
  const std::string id = OperationId(submit);
  Clock::duration longest{};
  int answered_while_active = 0;
  std::string status;
  std::string etag;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (status != "succeeded" && Clock::now() < deadline) {
    const auto start = Clock::now();
    auto r = etag.empty()
                 ? f.Call("GET", "/executions/" + id)
                 : f.Call("GET", "/executions/" + id, "", "alice", {{"If-None-Match", etag}});
    longest = std::max(longest, Clock::now() - start);
    if (r.status == 200) {
      status = BodyJson(r)["status"];
      etag = r.headers.Get("ETag").value_or("");
    } else {
      ASSERT_EQ(r.status, 304);
    }
    if (status != "succeeded") ++answered_while_active;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the poll interval
  }
  EXPECT_EQ(status, "succeeded");
  // Reads answer while the program runs instead of waiting for it: a 21 s
  // program polled every 0.5 s gets dozens of them. Each stays inside the
  // spec's bound for one durable exchange.
  EXPECT_GE(answered_while_active, 10);
  EXPECT_LT(longest, std::chrono::seconds(15));
  EXPECT_EQ(BodyJson(f.Call("GET", "/executions/" + id + "/result"))["stdout"],
            "AEVATAR_DURABLE_OK\n");
}

TEST(ChronoDurability, SlowSyncExecuteDoesNotHoldUpStatusReads) {
  ChronoFixture f({"--workers", "2"});
  ASSERT_TRUE(f.ok());
  std::atomic<bool> slow_done{false};
  std::thread slow([&] {
    f.Call("POST", "/execute", R"({"language":"bash","script":"sleep 8"})");
    slow_done = true;
  });
  ASSERT_TRUE(PollUntil([&] {
    return f.Metrics().body.find("\nchrono_running 1\n") != std::string::npos;
  })) << "the slow run never started";
  EXPECT_EQ(f.Call("GET", "/healthz").status, 200);
  EXPECT_EQ(f.Call("GET", "/executions/op_unknown").status, 404);
  // Both answered while the slow run still held its worker and connection.
  EXPECT_FALSE(slow_done.load());
  slow.join();
}

}  // namespace
}  // namespace aevatar::testing
