// The durable routes in-process, where the test holds the clock and the
// program: retention and cancel deadlines judged by the injected clock, ETags
// of a representation that cannot change underneath the test.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "chrono_harness.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

using ::aevatar::testing::PollUntil;

void ExpectProblem(const http::Response& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.headers.Get("Content-Type").value_or(""), "application/problem+json");
  nlohmann::json body = BodyOf(r);
  EXPECT_EQ(body.value("code", ""), code) << r.body;
  EXPECT_FALSE(body.value("diagnostic_id", "").empty());
}

const nlohmann::json kProgram = {{"language", "bash"}, {"script", "echo hi"}};

// Submits kProgram and returns its operation id.
std::string SubmitOne(ChronoHarness& h, const std::string& key) {
  http::Response r = h.Submit(kProgram, key);
  EXPECT_EQ(r.status, 202) << r.body;
  return BodyOf(r).value("operation_id", "");
}

std::string StatusOf(ChronoHarness& h, const std::string& id) {
  return BodyOf(h.Call("GET", "/executions/" + id)).value("status", "");
}

TEST(ExecutionsApi, PastRetentionIs410ByTheInjectedClock) {
  constexpr int64_t kRetentionMs = 60'000;
  ChronoHarness h(ChronoHarness::DefaultOptions(), kRetentionMs);
  ASSERT_TRUE(h.Start().ok());
  h.runner().Open();
  const int64_t created = h.clock().Now();
  const std::string id = SubmitOne(h, "short-lived");
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, id) == "succeeded"; }));

  h.clock().Advance(kRetentionMs - 1);
  EXPECT_EQ(h.Call("GET", "/executions/" + id).status, 200);
  EXPECT_EQ(h.Call("GET", "/executions/" + id + "/result").status, 200);
  h.clock().Advance(1);  // expires_at = created + retention: expired from then on
  ASSERT_EQ(h.clock().Now(), created + kRetentionMs);
  ExpectProblem(h.Call("GET", "/executions/" + id), 410, "OPERATION_EXPIRED");
  ExpectProblem(h.Call("GET", "/executions/" + id + "/result"), 410, "OPERATION_EXPIRED");
}

TEST(ExecutionsApi, IfNoneMatchOfAnActiveOperationIs304StrongOrWeak) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  const std::string id = SubmitOne(h, "etag");
  ASSERT_TRUE(h.runner().WaitStarted(1));  // held running: the document cannot change
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, id) == "running"; }));
  http::Response status = h.Call("GET", "/executions/" + id);
  ASSERT_EQ(status.status, 200);
  const std::string etag = status.headers.Get("ETag").value_or("");
  ASSERT_FALSE(etag.empty());
  ASSERT_EQ(etag.front(), '"');

  for (const std::string& condition :
       {etag, "W/" + etag, "\"other\", W/" + etag, std::string("*")}) {
    http::Response same = h.Call("GET", "/executions/" + id, "", {{"If-None-Match", condition}});
    EXPECT_EQ(same.status, 304) << condition;
    EXPECT_EQ(same.body, "") << condition;
    EXPECT_EQ(same.headers.Get("ETag").value_or(""), etag) << condition;
    EXPECT_EQ(same.headers.Get("Retry-After").value_or(""), "1") << condition;
    EXPECT_EQ(same.headers.Get("Retry-After-Ms").value_or(""), std::to_string(kMinPollMs))
        << condition;
  }
  http::Response other = h.Call("GET", "/executions/" + id, "", {{"If-None-Match", "\"other\""}});
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.headers.Get("ETag").value_or(""), etag);

  h.runner().Open();
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, id) == "succeeded"; }));
  http::Response done = h.Call("GET", "/executions/" + id, "", {{"If-None-Match", etag}});
  EXPECT_EQ(done.status, 200) << "the finished operation kept the running one's ETag";
  EXPECT_NE(done.headers.Get("ETag").value_or(""), etag);
  EXPECT_FALSE(done.headers.Get("Retry-After").has_value());
}

TEST(ExecutionsApi, AQueuedOperationsRetryAfterSaysWhenItsTurnComes) {
  ChronoHarness h;  // one worker
  ASSERT_TRUE(h.Start().ok());
  const std::vector<Operation> queued = QueueBehindAPaceOf500Ms(h);
  ASSERT_EQ(queued.size(), 20u);

  http::Response far = h.Call("GET", "/executions/" + queued[19].id);
  ASSERT_EQ(far.status, 200) << far.body;
  // The held run, the 19 queued ahead and its own: 21 runs of 500 ms,
  // 10.5 s. Two thirds of that, to come back before the end.
  EXPECT_EQ(far.headers.Get("Retry-After-Ms").value_or(""), "7000");
  EXPECT_EQ(far.headers.Get("Retry-After").value_or(""), "7");
  // Three runs, 1.5 s: two thirds, but never less than a second from there.
  EXPECT_EQ(h.Call("GET", "/executions/" + queued[1].id).headers.Get("Retry-After-Ms"), "1000");
  // Nothing queued ahead (only the held run): as long as it has waited so
  // far (19 ms, sooner than one run at the pace), lifted to the floor.
  EXPECT_EQ(h.Call("GET", "/executions/" + queued[0].id).headers.Get("Retry-After-Ms"),
            std::to_string(kMinPollMs));
  http::Response early = h.Call("GET", "/executions/" + queued[7].id + "/result");
  EXPECT_EQ(early.status, 409);
  EXPECT_EQ(early.headers.Get("Retry-After-Ms").value_or(""), "3000");  // nine runs
  EXPECT_EQ(early.headers.Get("Retry-After").value_or(""), "3");
  // A new submission joins the back of the queue, behind all 20: 11 s, and
  // whole seconds round up (never sooner than the finer hint).
  h.clock().Advance(1);
  http::Response receipt = h.Submit({{"language", "bash"}, {"script", "true"}}, "k-new");
  ASSERT_EQ(receipt.status, 202) << receipt.body;
  EXPECT_EQ(receipt.headers.Get("Retry-After-Ms").value_or(""), "7333");
  EXPECT_EQ(receipt.headers.Get("Retry-After").value_or(""), "8");
  h.runner().Open();
}

TEST(ExecutionsApi, RetryAfterMsDoublesWithARunsAgeUntilWholeSecondsTakeOver) {
  ChronoHarness h;  // one worker
  ASSERT_TRUE(h.Start().ok());
  // Nothing ahead: the receipt asks for a read as soon as the floor allows.
  http::Response receipt = h.Submit(kProgram, "soon");
  ASSERT_EQ(receipt.status, 202) << receipt.body;
  EXPECT_EQ(receipt.headers.Get("Retry-After").value_or(""), "1");
  EXPECT_EQ(receipt.headers.Get("Retry-After-Ms").value_or(""), std::to_string(kMinPollMs));
  const std::string id = BodyOf(receipt).value("operation_id", "");
  ASSERT_TRUE(h.runner().WaitStarted(1));  // held running
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, id) == "running"; }));

  auto hint_after = [&](int64_t ran_ms) {
    h.clock().Advance(ran_ms);
    http::Response status = h.Call("GET", "/executions/" + id);
    EXPECT_EQ(status.headers.Get("Retry-After").value_or(""), "1");
    return status.headers.Get("Retry-After-Ms");
  };
  EXPECT_EQ(hint_after(0), std::to_string(kMinPollMs));
  EXPECT_EQ(hint_after(300), "300");  // as long as it has run so far
  EXPECT_EQ(hint_after(699), "999");
  EXPECT_EQ(hint_after(1), std::nullopt);  // a second: Retry-After alone
  h.runner().Open();
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, id) == "succeeded"; }));
  EXPECT_FALSE(h.Call("GET", "/executions/" + id).headers.Get("Retry-After-Ms").has_value());
}

std::string CancelBody(int64_t deadline_unix_ms) {
  return nlohmann::json{{"deadline_unix_ms", deadline_unix_ms}}.dump();
}

TEST(ExecutionsApi, ACancelAtOrAfterItsDeadlineIs409AndChangesNothing) {
  ChronoHarness h;  // one worker
  ASSERT_TRUE(h.Start().ok());
  const std::string running = SubmitOne(h, "running");
  ASSERT_TRUE(h.runner().WaitStarted(1));
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, running) == "running"; }));
  const std::string queued = SubmitOne(h, "queued");  // waits behind it

  const int64_t now = h.clock().Now();
  for (const std::string& id : {running, queued}) {
    for (int64_t deadline : {now - 60'000, now - 1, now}) {
      http::Response late = h.Call("POST", "/executions/" + id + "/cancel", CancelBody(deadline));
      ExpectProblem(late, 409, "CANCEL_DEADLINE_EXCEEDED");
    }
  }
  // Nothing started: the running program was not signalled, the queued
  // operation was not cancelled.
  EXPECT_EQ(StatusOf(h, running), "running");
  EXPECT_FALSE(h.store().Get(running)->cancel_requested);
  EXPECT_EQ(StatusOf(h, queued), "queued");
  EXPECT_EQ(h.executor().queued(), 1);

  // Before its deadline the same request cancels.
  http::Response in_time = h.Call("POST", "/executions/" + queued + "/cancel", CancelBody(now + 1));
  ASSERT_EQ(in_time.status, 200) << in_time.body;
  EXPECT_EQ(BodyOf(in_time).value("status", ""), "cancelled");
  in_time = h.Call("POST", "/executions/" + running + "/cancel", CancelBody(now + 1));
  ASSERT_EQ(in_time.status, 200) << in_time.body;
  ASSERT_TRUE(PollUntil([&] { return StatusOf(h, running) == "cancelled"; }));
  EXPECT_EQ(h.runner().started(), 1);  // the queued one never ran
}

TEST(ExecutionsApi, ACancelWithoutADeadlineStillCancels) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  const std::string running = SubmitOne(h, "running");
  ASSERT_TRUE(h.runner().WaitStarted(1));
  const std::string queued = SubmitOne(h, "queued");
  for (const char* body : {"", "{}", R"({"deadline_unix_ms":null})"}) {
    http::Response r = h.Call("POST", "/executions/" + queued + "/cancel", body);
    EXPECT_EQ(r.status, 200) << body << " -> " << r.body;
    EXPECT_EQ(BodyOf(r).value("status", ""), "cancelled") << body;
  }
  ExpectProblem(h.Call("POST", "/executions/" + running + "/cancel", R"({"deadline_unix_ms":1.5})"),
                400, "INVALID_FIELD_TYPE");
  ExpectProblem(h.Call("POST", "/executions/" + running + "/cancel", "[1]"), 400, "MALFORMED_JSON");
}

}  // namespace
}  // namespace aevatar::chrono
