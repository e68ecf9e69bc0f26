// Interactive code_execute reuses a credential's route admission while NyxID
// confirms the facts it was decided on (aevatar/admission/admission_cache.h,
// nyxid/routes/caller_facts.h), through the three real binaries: repeated
// calls read NyxID's inventory once, a change to the caller's routes is met
// on the very next call, and a refused reuse never runs the source twice.
#include <cstdlib>

#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "testing/metrics_text.h"

namespace aevatar::testing {
namespace {

// The value of `series` as `base_url`/metrics renders it (loopback: no
// token needed), 0 when absent.
double Metric(const std::string& base_url, const std::string& series) {
  http::ClientRequest request;
  request.method = "GET";
  request.url = base_url + "/metrics";
  request.timeout = std::chrono::seconds(30);
  auto response = http::Fetch(request);
  EXPECT_TRUE(response.ok() && response->status == 200);
  if (!response.ok()) return 0;
  return SeriesValue(response->body, series).value_or(0);
}

constexpr char kKeysReads[] = R"(nyxid_http_requests_total{route="/api/v1/keys",status="200"})";
constexpr char kFactsRefusals[] =
    R"(nyxid_http_requests_total{route="/api/v1/proxy/{slug}/{path...}",status="412"})";
constexpr char kRunsOk[] = R"(chrono_runs_total{verdict="ok"})";

class AdmissionReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stack_.ok());
    token_ = stack_.Login("alice");
    ASSERT_FALSE(token_.empty());
  }
  double Nyxid(const char* series) { return Metric(stack_.nyxid().url(), series); }
  double Chrono(const char* series) { return Metric(stack_.chrono().base_url(), series); }
  http::ClientResponse Echo(const std::string& text) {
    return stack_.Execute(token_, {{"language", "bash"}, {"source", "echo " + text}});
  }

  AevatarStack stack_{kAliceWithChronoRoute};
  std::string token_;
};

TEST_F(AdmissionReuse, RepeatedCallsReadTheInventoryOnce) {
  const double keys_before = Nyxid(kKeysReads);
  for (const char* text : {"one", "two", "three"}) {
    auto r = Echo(text);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(JsonOf(r).value("stdout", ""), std::string(text) + "\n");
  }
  EXPECT_EQ(Nyxid(kKeysReads) - keys_before, 1) << "the first call admits, the others reuse it";
  EXPECT_EQ(Nyxid(kFactsRefusals), 0);
}

TEST_F(AdmissionReuse, AChangedRouteIsMetOnTheNextCallWithTheTypedError) {
  // Two calls: the second reuses the admission, so NyxID has checked its
  // digest and remembers it (facts_digest_cache.h) when the route changes.
  ASSERT_EQ(Echo("warm").status, 200);
  ASSERT_EQ(Echo("reusing").status, 200);
  const std::string id = stack_.nyxid().KeyBySlug(token_, "chrono-sandbox").value("id", "");
  ASSERT_FALSE(id.empty());
  const std::string path = "/api/v1/user-services/" + id;
  ASSERT_EQ(stack_.nyxid().Call("PUT", path, token_, R"({"active":false})").status, 200);
  // Without the digest the proxy would answer its own 403 ROUTE_INACTIVE; the
  // reuse is refused instead and the fresh admission names the cause.
  auto refused = Echo("after");
  EXPECT_EQ(JsonOf(refused).value("code", ""), "CODE_EXECUTION_ROUTE_INACTIVE") << refused.body;
  EXPECT_EQ(Nyxid(kFactsRefusals), 1);
  ASSERT_EQ(stack_.nyxid().Call("PUT", path, token_, R"({"active":true})").status, 200);
  auto again = Echo("again");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonOf(again).value("stdout", ""), "again\n");
  // The refused admission was forgotten: the fresh one is reused from here.
  ASSERT_EQ(Echo("reused").status, 200);
  EXPECT_EQ(Nyxid(kFactsRefusals), 1);
}

TEST_F(AdmissionReuse, ARefusedReuseRunsTheSourceOnce) {
  ASSERT_EQ(Echo("warm").status, 200);
  // A new label changes alice's facts, not her admission's answer.
  const std::string id = stack_.nyxid().KeyBySlug(token_, "chrono-sandbox").value("id", "");
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(stack_.nyxid()
                .Call("PUT", "/api/v1/user-services/" + id, token_, R"({"label":"renamed"})")
                .status,
            200);
  const double runs_before = Chrono(kRunsOk);
  const double keys_before = Nyxid(kKeysReads);
  auto r = Echo("once");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonOf(r).value("stdout", ""), "once\n");
  EXPECT_EQ(Nyxid(kFactsRefusals), 1);
  EXPECT_EQ(Nyxid(kKeysReads) - keys_before, 1);
  EXPECT_EQ(Chrono(kRunsOk) - runs_before, 1);
}

}  // namespace
}  // namespace aevatar::testing
