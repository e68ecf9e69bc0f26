// The run actor's authorization catalog at work: NyxID facts observed for the
// owner and the HumanBearer runtime re-read revoke grants, and a revoked
// grant stops the next step before any network call.
#include <atomic>
#include <thread>

#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/durable_execution.h"
#include "runtime_fixture.h"
#include "testing/poll.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

NyxidFacts WithInactiveRoute() {
  NyxidFacts facts = testing::GrantingFacts();
  facts.inventory[0].active = false;
  return facts;
}

class CatalogRuntimeTest : public testing::RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    UseWorkflow(testing::kTwoStepWorkflow);
  }

  // Ticks until the first step is done and the second is about to start
  // (its start is due but has not run).
  void RunFirstStep(const std::string& run_id) {
    for (int tick = 0; tick < 120; ++tick) {
      const json state = State(run_id);
      if (state.value("step_index", 0) == 1 && Phase(run_id) == "running") return;
      runtime_->DrainDueForTest();
      now_ += 1000;
    }
    FAIL() << "the first step did not finish: " << State(run_id).dump();
  }

  json SecondStep(const std::string& run_id) { return State(run_id)["steps"][1]; }
};

TEST_F(CatalogRuntimeTest, ARevokedGrantStopsTheNextStepBeforeAnyNetworkCall) {
  const std::string run_id = Start();  // a delegation run: it never re-reads NyxID
  RunFirstStep(run_id);
  ASSERT_EQ(executor_.CountOf("submit"), 1);
  const size_t exchanges = executor_.exchanges().size();
  // Readiness (or any admission) read the owner's facts: the route is inactive now.
  auto changed = runtime_->ObserveNyxidFacts("user-1", WithInactiveRoute());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 1);
  EXPECT_EQ(EventCount(run_id, "catalog.revoked"), 1);
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(SecondStep(run_id).value("outcome_code", ""), "code_execution_route_inactive");
  EXPECT_FALSE(SecondStep(run_id).value("diagnostic_id", "").empty());
  EXPECT_EQ(executor_.exchanges().size(), exchanges) << "no exchange after the revocation";
  EXPECT_EQ(facts_reads_.load(), 0) << "no NyxID read either";
}

// The first step's result, its audit and the second step's admission and
// submit follow one another at once, in one delivery. Facts that arrive
// while the result is fetched must not wait for all of them: they apply
// before the next turn, and the second step stops before its submit.
TEST_F(CatalogRuntimeTest, FactsArrivingDuringTurnsThatFollowAtOnceApplyBeforeTheNextTurn) {
  const std::string run_id = Start();
  std::thread observer;
  std::atomic<int> changed{-1};
  executor_.before_result = [&] {
    if (observer.joinable()) return;
    observer = std::thread([&] {
      auto revoked = runtime_->ObserveNyxidFacts("user-1", WithInactiveRoute());
      changed = revoked.ok() ? *revoked : -2;
    });
    // The fetch goes on once the facts wait for the run.
    EXPECT_TRUE(
        ::aevatar::testing::PollUntil([&] { return runtime_->MessageWaitingForTest(run_id); }));
  };
  for (int tick = 0; tick < 20 && Phase(run_id) != "failed" && Phase(run_id) != "succeeded";
       ++tick) {
    runtime_->DrainDueForTest(WorkflowRuntime::kMaxTurnsPerDelivery);  // as the workers do
    now_ += 1000;
  }
  if (observer.joinable()) observer.join();
  executor_.before_result = nullptr;  // it refers to this test's locals
  EXPECT_EQ(changed.load(), 1);
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0].value("status", ""), "succeeded");
  EXPECT_EQ(SecondStep(run_id).value("outcome_code", ""), "code_execution_route_inactive");
  EXPECT_EQ(executor_.CountOf("submit"), 1) << "the second step was submitted past the facts";
}

TEST_F(CatalogRuntimeTest, FactsOfAnotherOwnerOrThatStillGrantChangeNothing) {
  const std::string run_id = Start();
  NyxidFacts other = WithInactiveRoute();
  other.caller.user_id = "user-2";
  EXPECT_EQ(*runtime_->ObserveNyxidFacts("user-2", other), 0);
  EXPECT_EQ(*runtime_->ObserveNyxidFacts("user-1", testing::GrantingFacts()), 0);
  EXPECT_FALSE(runtime_->ObserveNyxidFacts("user-1", other).ok()) << "facts of someone else";
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  EXPECT_EQ(Phase(run_id), "succeeded");
  EXPECT_EQ(executor_.CountOf("submit"), 2);
}

TEST_F(CatalogRuntimeTest, StartRunNeedsACatalogThatGrantsTheSealedRoute) {
  Caller caller{CredentialKind::kProxyDelegation, "user-1", "credential", false};
  auto inputs = BindInputs(definition_, json::object());
  ASSERT_TRUE(inputs.ok());
  const json proof = MakeAdmissionProof(testing::TestRoute(), now_);
  // NyxID's facts admitted another route than the proof seals.
  NyxidFacts facts = testing::GrantingFacts();
  facts.inventory[0].id = "us_route_2";
  const json other =
      *CatalogFromFacts(facts, {"us_route_2", "chrono-sandbox", "chrono-sandbox"}, now_);
  auto refused = runtime_->StartRun(caller, definition_, *inputs, proof, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("CODE_EXECUTION_ADMISSION_PROOF_INVALID"),
            std::string::npos);
  json revoked = *CatalogFromFacts(testing::GrantingFacts(), testing::TestRoute(), now_);
  ApplyFacts(revoked, WithInactiveRoute(), kRevokedByObservedFacts, now_);
  refused = runtime_->StartRun(caller, definition_, *inputs, proof, revoked);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("CODE_EXECUTION_ROUTE_INACTIVE"), std::string::npos);
}

// The HumanBearer runtime re-read against each NyxID answer.
TEST_F(CatalogRuntimeTest, HumanRereadThatExplicitlyDeniesFailsClosedBeforeTheExchange) {
  read_facts_ = [](const std::string&) { return testing::GrantingFacts(); };
  const std::string run_id = Start("", CredentialKind::kHumanBearer);
  RunFirstStep(run_id);
  read_facts_ = [](const std::string&) -> absl::StatusOr<NyxidFacts> {
    NyxidFacts facts = testing::GrantingFacts();
    facts.inventory[0].owner_type = "org";  // an org route that no longer allows its members
    facts.inventory[0].owner_id = "acme";
    facts.caller.org_roles["acme"] = "member";
    return facts;
  };
  RunUntil([&] { return Phase(run_id) == "failed"; });
  EXPECT_EQ(SecondStep(run_id).value("outcome_code", ""), "code_execution_route_access_denied");
  EXPECT_EQ(executor_.CountOf("submit"), 1);
  EXPECT_EQ(State(run_id)["authorization_catalog"]["grants"][0]["revoked"]["source"],
            kRevokedByRuntimeReread);
}

TEST_F(CatalogRuntimeTest, HumanReread403FailsClosedAndMalformedInventoryIsTyped) {
  struct Case {
    absl::Status read;
    const char* code;
  };
  for (const Case& c :
       {Case{absl::PermissionDeniedError("NYXID_ACCESS_DENIED"),
             "code_execution_route_access_denied"},
        Case{absl::InvalidArgumentError("field 'keys' is missing"), kOutcomeResponseInvalid}}) {
    read_facts_ = [&](const std::string&) -> absl::StatusOr<NyxidFacts> { return c.read; };
    const int submits = executor_.CountOf("submit");
    const std::string run_id = Start("", CredentialKind::kHumanBearer);
    RunUntil([&] { return Phase(run_id) == "failed"; });
    EXPECT_EQ(State(run_id)["steps"][0].value("outcome_code", ""), c.code);
    EXPECT_EQ(executor_.CountOf("submit"), submits) << c.code;
  }
}

TEST_F(CatalogRuntimeTest, HumanReread401Or5xxContinuesOnTheSealedId) {
  for (const absl::Status& read : {absl::UnauthenticatedError("NYXID_CREDENTIAL_REJECTED"),
                                   absl::UnavailableError("NYXID_UNAVAILABLE")}) {
    read_facts_ = [&](const std::string&) -> absl::StatusOr<NyxidFacts> { return read; };
    const int reads = facts_reads_;
    const std::string run_id = Start("", CredentialKind::kHumanBearer);
    RunUntil([&] { return Phase(run_id) == "succeeded"; });
    EXPECT_EQ(Phase(run_id), "succeeded") << read;
    EXPECT_EQ(facts_reads_ - reads, 2) << "one re-read per step";
    EXPECT_EQ(EventCount(run_id, "route.checked"), 2);
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
