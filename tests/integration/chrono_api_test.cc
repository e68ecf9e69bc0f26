// The executor's HTTP contract over real loopback HTTP against the real
// binary: status codes, headers and typed problem codes. (Retention and the
// cancel deadline are judged by an injected clock in
// tests/chrono/executions_api_test.cc.)
#include <signal.h>

#include <vector>

#include "base/crypto.h"
#include "chrono_client.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

class ChronoApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture_ = new ChronoFixture({"--workers", "2"}); }
  static void TearDownTestSuite() { delete fixture_; }
  void SetUp() override { ASSERT_TRUE(fixture_->ok()) << fixture_->service().ReadLog(); }
  static ChronoFixture& f() { return *fixture_; }
  static ChronoFixture* fixture_;
};
ChronoFixture* ChronoApi::fixture_ = nullptr;

void ExpectProblem(const http::ClientResponse& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.headers.Get("Content-Type").value_or(""), "application/problem+json");
  nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body.value("code", ""), code) << r.body;
  EXPECT_EQ(body.value("status", 0), status);
  EXPECT_FALSE(body.value("diagnostic_id", "").empty());
  EXPECT_TRUE(body.contains("type") && body.contains("title") && body.contains("detail"));
}

TEST_F(ChronoApi, ExecuteRunsSynchronously) {
  auto r = f().Call("POST", "/execute",
                    R"json({"language":"python","script":"print(6*7)","timeout_secs":30})json");
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body["success"], true);
  EXPECT_EQ(body["exit_code"], 0);
  EXPECT_EQ(body["stdout"], "42\n");
  EXPECT_EQ(body["stderr"], "");
  EXPECT_EQ(body["timed_out"], false);
  EXPECT_EQ(body["verdict"], "ok");
  EXPECT_EQ(body["stdout_truncated"], false);
  EXPECT_TRUE(body["execution_time_ms"].is_number_integer());
}

TEST_F(ChronoApi, ExecuteReportsFailuresAsResults) {
  auto r = f().Call("POST", "/execute", R"({"language":"bash","script":"echo no >&2; exit 3"})");
  ASSERT_EQ(r.status, 200);
  nlohmann::json body = BodyJson(r);
  EXPECT_EQ(body["success"], false);
  EXPECT_EQ(body["exit_code"], 3);
  EXPECT_EQ(body["stderr"], "no\n");
  EXPECT_EQ(body["verdict"], "nonzero_exit");
}

TEST_F(ChronoApi, EachBadInputHasItsOwnCode) {
  ExpectProblem(f().Call("POST", "/execute", "{not json"), 400, "MALFORMED_JSON");
  ExpectProblem(f().Call("POST", "/execute", "[1,2]"), 400, "INVALID_REQUEST");
  ExpectProblem(f().Call("POST", "/execute", R"({"language":"cobol","script":"x"})"), 400,
                "UNSUPPORTED_LANGUAGE");
  ExpectProblem(f().Call("POST", "/execute", R"({"script":"x"})"), 400, "LANGUAGE_MISSING");
  ExpectProblem(f().Call("POST", "/execute", R"({"language":"bash"})"), 400, "SCRIPT_MISSING");
  ExpectProblem(f().Call("POST", "/execute", R"({"language":"bash","script":7})"), 400,
                "INVALID_FIELD_TYPE");
  for (const char* timeout : {"0", "601", "-5"}) {
    ExpectProblem(f().Call("POST", "/execute",
                           std::string(R"({"language":"bash","script":"true","timeout_secs":)") +
                               timeout + "}"),
                  400, "INVALID_TIMEOUT");
  }
  ExpectProblem(
      f().Call("POST", "/execute", R"({"language":"bash","script":"true","timeout_secs":"10"})"),
      400, "INVALID_FIELD_TYPE");
  ExpectProblem(f().Call("POST", "/execute",
                         R"({"language":"bash","script":"true","env":{"NYXID_API_KEY":"x"}})"),
                400, "INVALID_ENV");
  std::string huge = R"({"language":"bash","script":")" + std::string(9 << 20, 'x') + "\"}";
  ExpectProblem(f().Call("POST", "/execute", huge), 413, "BODY_TOO_LARGE");
}

TEST_F(ChronoApi, ZeroPersistenceProbeGetsKeyMissingBeforeAnythingElse) {
  auto r = f().Call("POST", "/executions", R"({"script":"","language":""})");
  ExpectProblem(r, 400, "IDEMPOTENCY_KEY_MISSING");
  auto garbage = f().Call("POST", "/executions", "{{{");
  ExpectProblem(garbage, 400, "IDEMPOTENCY_KEY_MISSING");
}

TEST_F(ChronoApi, OverlongIdempotencyKeyIsRejected) {
  auto r = f().Submit({{"language", "bash"}, {"script", "true"}}, std::string(256, 'k'));
  ExpectProblem(r, 400, "IDEMPOTENCY_KEY_INVALID");
}

TEST_F(ChronoApi, DurableLifecycleWithReceiptETagsAndResult) {
  // The program waits for its marked child, which the test ends from the
  // host: until then the operation cannot be terminal, whatever the timing.
  const std::string marker = "chrono-api-lifecycle-" + base::HexEncode(base::RandomBytes(6));
  nlohmann::json body = {{"language", "bash"},
                         {"script", "(exec -a " + marker + " sleep 60) & wait $!; echo durable"},
                         {"timeout_secs", 120}};
  auto submit = f().Submit(body, "lifecycle-key-1");
  ASSERT_EQ(submit.status, 202) << submit.body;
  nlohmann::json receipt = BodyJson(submit);
  const std::string id = receipt["operation_id"];
  EXPECT_EQ(receipt["status"], "queued");
  EXPECT_EQ(receipt["status_url"], "/executions/" + id);
  EXPECT_EQ(receipt["result_url"], "/executions/" + id + "/result");
  EXPECT_EQ(receipt["cancel_url"], "/executions/" + id + "/cancel");
  EXPECT_TRUE(receipt.contains("created_at") && receipt.contains("expires_at"));
  EXPECT_EQ(submit.headers.Get("Location").value_or(""), "/executions/" + id);
  EXPECT_FALSE(submit.headers.Get("ETag").value_or("").empty());
  EXPECT_EQ(submit.headers.Get("Retry-After").value_or(""), "1");

  std::vector<pid_t> child;
  ASSERT_TRUE(PollUntil([&] { return !(child = ProcessesMatching(marker)).empty(); }));
  auto early = f().Call("GET", "/executions/" + id + "/result");
  ExpectProblem(early, 409, "OPERATION_NOT_TERMINAL");
  EXPECT_EQ(early.headers.Get("Retry-After").value_or(""), "1");

  auto status = f().Call("GET", "/executions/" + id);
  ASSERT_EQ(status.status, 200);
  const std::string etag = status.headers.Get("ETag").value_or("");
  ASSERT_EQ(etag.front(), '"');
  EXPECT_EQ(status.headers.Get("Retry-After").value_or(""), "1");
  EXPECT_EQ(BodyJson(status)["status"], "running");
  for (pid_t pid : child) ::kill(pid, SIGTERM);
  nlohmann::json done = f().WaitDone(id);
  EXPECT_EQ(done["status"], "succeeded");
  EXPECT_EQ(done["done"], true);
  EXPECT_TRUE(done.contains("started_at") && done.contains("finished_at"));
  auto final_status = f().Call("GET", "/executions/" + id);
  EXPECT_FALSE(final_status.headers.Get("Retry-After").has_value());
  const std::string final_etag = final_status.headers.Get("ETag").value_or("");
  EXPECT_NE(final_etag, etag);
  // A terminal operation's document no longer changes, so each condition has
  // exactly one right answer (If-None-Match compares weakly).
  for (const std::string& condition :
       {final_etag, "W/" + final_etag, "\"other\", W/" + final_etag, std::string("*")}) {
    auto same = f().Call("GET", "/executions/" + id, "", "alice", {{"If-None-Match", condition}});
    EXPECT_EQ(same.status, 304) << condition;
    EXPECT_EQ(same.body, "") << condition;
    EXPECT_EQ(same.headers.Get("ETag").value_or(""), final_etag) << condition;
  }
  EXPECT_EQ(f().Call("GET", "/executions/" + id, "", "alice", {{"If-None-Match", etag}}).status,
            200);

  auto result = f().Call("GET", "/executions/" + id + "/result");
  ASSERT_EQ(result.status, 200);
  nlohmann::json result_body = BodyJson(result);
  EXPECT_EQ(result_body["operation_id"], id);
  EXPECT_EQ(result_body["status"], "succeeded");
  EXPECT_EQ(result_body["stdout"], "durable\n");
  EXPECT_EQ(result_body["success"], true);

  // Same owner, key and payload converges on the same operation.
  auto again = f().Submit(body, "lifecycle-key-1");
  ASSERT_EQ(again.status, 202);
  EXPECT_EQ(BodyJson(again)["operation_id"], id);
  // Same key, different payload.
  nlohmann::json other = body;
  other["script"] = "print('different')";
  ExpectProblem(f().Submit(other, "lifecycle-key-1"), 409, "IDEMPOTENCY_KEY_REUSE");
  // Cancel on a terminal operation changes nothing.
  auto cancel = f().Call("POST", "/executions/" + id + "/cancel", "{}");
  ASSERT_EQ(cancel.status, 200);
  EXPECT_EQ(BodyJson(cancel)["status"], "succeeded");
}

TEST_F(ChronoApi, FailedProgramIsAFailedOperation) {
  auto submit = f().Submit({{"language", "bash"}, {"script", "exit 4"}}, "failing-key");
  ASSERT_EQ(submit.status, 202);
  const std::string id = BodyJson(submit)["operation_id"];
  EXPECT_EQ(f().WaitDone(id)["status"], "failed");
  nlohmann::json result = BodyJson(f().Call("GET", "/executions/" + id + "/result"));
  EXPECT_EQ(result["exit_code"], 4);
  EXPECT_EQ(result["status"], "failed");
}

TEST_F(ChronoApi, CancelKillsARunningProgramAndIsIdempotent) {
  // Once the program has exec'd the marked sleep, "started" is in its pipe.
  const std::string marker = "chrono-api-cancel-" + base::HexEncode(base::RandomBytes(6));
  auto submit = f().Submit({{"language", "bash"},
                            {"script", "echo started; exec -a " + marker + " sleep 60"},
                            {"timeout_secs", 120}},
                           "cancel-key");
  ASSERT_EQ(submit.status, 202);
  const std::string id = BodyJson(submit)["operation_id"];
  ASSERT_TRUE(PollUntil([&] { return !ProcessesMatching(marker).empty(); }))
      << "the program never reached its sleep";
  const int64_t deadline = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count() +
                           120000;
  const std::string cancel_body = "{\"deadline_unix_ms\":" + std::to_string(deadline) + "}";
  auto first = f().Call("POST", "/executions/" + id + "/cancel", cancel_body);
  ASSERT_EQ(first.status, 200) << first.body;
  // Bounded below the program's 60 s sleep: only the cancel ends it sooner.
  nlohmann::json done = f().WaitDone(id, 45);
  EXPECT_EQ(done["status"], "cancelled");
  auto second = f().Call("POST", "/executions/" + id + "/cancel", cancel_body);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(BodyJson(second)["status"], "cancelled");
  nlohmann::json result = BodyJson(f().Call("GET", "/executions/" + id + "/result"));
  EXPECT_EQ(result["status"], "cancelled");
  EXPECT_EQ(result["stdout"], "started\n");
  EXPECT_TRUE(PollUntil([&] { return ProcessesMatching(marker).empty(); }))
      << "the cancelled program still runs";
  ExpectProblem(f().Call("POST", "/executions/" + id + "/cancel", R"({"deadline_unix_ms":"x"})"),
                400, "INVALID_FIELD_TYPE");
}

TEST_F(ChronoApi, OtherOwnersAndUnknownIdsAreTheSame404) {
  auto submit = f().Submit({{"language", "bash"}, {"script", "true"}}, "owner-key", "alice");
  ASSERT_EQ(submit.status, 202);
  const std::string id = BodyJson(submit)["operation_id"];
  for (const char* suffix : {"", "/result"}) {
    ExpectProblem(f().Call("GET", "/executions/" + id + suffix, "", "mallory"), 404,
                  "OPERATION_NOT_FOUND");
    ExpectProblem(f().Call("GET", std::string("/executions/op_doesnotexist") + suffix), 404,
                  "OPERATION_NOT_FOUND");
  }
  ExpectProblem(f().Call("POST", "/executions/" + id + "/cancel", "{}", "mallory"), 404,
                "OPERATION_NOT_FOUND");
  // The same key is private to each owner.
  auto mallory = f().Submit({{"language", "bash"}, {"script", "true"}}, "owner-key", "mallory");
  ASSERT_EQ(mallory.status, 202);
  EXPECT_NE(BodyJson(mallory)["operation_id"], id);
}

TEST_F(ChronoApi, HealthReadinessAndMetricsNeedNoToken) {
  ASSERT_EQ(f().Call("POST", "/execute", R"({"language":"bash","script":"true"})").status, 200);
  const std::string none;
  EXPECT_EQ(f().Call("GET", "/healthz", "", "", {}, &none).status, 200);
  auto ready = f().Call("GET", "/readyz", "", "", {}, &none);
  EXPECT_EQ(ready.status, 200) << ready.body;
  auto metrics = f().Call("GET", "/metrics", "", "", {}, &none);
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("chrono_http_requests_total{route=\"/execute\""), std::string::npos);
  EXPECT_NE(metrics.body.find("chrono_runs_total{verdict=\"ok\"}"), std::string::npos);
  EXPECT_NE(metrics.body.find("chrono_queue_depth"), std::string::npos);
  EXPECT_NE(metrics.body.find("chrono_run_duration_seconds_bucket"), std::string::npos);
}

TEST(ChronoApiDisabled, DisabledAsyncIs503AfterTheKeyCheck) {
  ChronoFixture fixture({"--disable-async"});
  ASSERT_TRUE(fixture.ok());
  ExpectProblem(fixture.Call("POST", "/executions", R"({"script":"","language":""})"), 400,
                "IDEMPOTENCY_KEY_MISSING");
  ExpectProblem(fixture.Submit({{"language", "bash"}, {"script", "true"}}, "k"), 503,
                "ASYNC_EXECUTION_UNAVAILABLE");
  EXPECT_EQ(fixture.Call("POST", "/execute", R"({"language":"bash","script":"true"})").status, 200);
}

}  // namespace
}  // namespace aevatar::testing
