// Unattended runs: the owner's Vault-backed Agent Key is resolved at each
// outbound call (never sealed into the run), and a key missing from the
// vault fails the step typed.
#include "aevatar/admission/admission_proof.h"
#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "base/api_error.h"
#include "runtime_fixture.h"

namespace aevatar::orchestrator::testing {
namespace {

class VaultKeyRunTest : public RuntimeFixture {
 protected:
  std::string StartUnattended() {
    nlohmann::json proof = MakeAdmissionProof(TestRoute(), now_);
    auto catalog = CatalogFromFacts(GrantingFacts(), TestRoute(), now_);
    EXPECT_TRUE(catalog.ok()) << catalog.status();
    auto inputs = BindInputs(definition_, {{"marker", "MARKER_VAULT"}});
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    auto run_id =
        runtime_->StartVaultKeyRun("user-1", {TestRoute().user_service_id}, definition_, *inputs,
                                   proof, *catalog, {{"kind", "webhook"}, {"trigger_id", "trg_1"}});
    EXPECT_TRUE(run_id.ok()) << run_id.status();
    return run_id.ok() ? *run_id : "";
  }
};

TEST_F(VaultKeyRunTest, TheKeyIsReadFromTheVaultAtEachCallAndNeverSealedIntoTheRun) {
  std::atomic<int> reads{0};
  agent_keys_ = [&](const std::string& owner) -> absl::StatusOr<std::string> {
    EXPECT_EQ(owner, "user-1");
    // A rotated key is picked up at the next call.
    return ++reads <= 1 ? std::string("nyxid_ag_first") : std::string("nyxid_ag_second");
  };
  runtime_ = MakeRuntime();
  const std::string run_id = StartUnattended();
  RunUntil([&] { return Phase(run_id) == "succeeded"; });
  ASSERT_EQ(Phase(run_id), "succeeded") << State(run_id).dump();
  const nlohmann::json caller = State(run_id)["caller"];
  EXPECT_EQ(caller.value("kind", ""), "AgentKey");
  EXPECT_EQ(caller.value("credential_source", ""), "vault");
  EXPECT_FALSE(caller.contains("credential_ref"));
  EXPECT_EQ(State(run_id).dump().find("nyxid_ag_"), std::string::npos);
  absl::MutexLock lock(&credentials_mu_);
  ASSERT_GE(transport_credentials_.size(), 2u);
  EXPECT_GE(reads.load(), static_cast<int>(transport_credentials_.size()));
  EXPECT_EQ(transport_credentials_.back(), "nyxid_ag_second");
  for (const std::string& credential : transport_credentials_) {
    EXPECT_EQ(credential.rfind("nyxid_ag_", 0), 0u);
  }
}

TEST_F(VaultKeyRunTest, NoKeyInTheVaultFailsTheStepTyped) {
  agent_keys_ = [](const std::string&) -> absl::StatusOr<std::string> {
    return base::ApiError(absl::StatusCode::kFailedPrecondition,
                          WorkflowRuntime::kAgentKeyMissingCode, "no key");
  };
  runtime_ = MakeRuntime();
  const std::string run_id = StartUnattended();
  RunUntil([&] { return Phase(run_id) == "failed"; });
  ASSERT_EQ(Phase(run_id), "failed");
  EXPECT_EQ(State(run_id)["steps"][0].value("outcome_code", ""),
            WorkflowRuntime::kAgentKeyMissingCode);
  absl::MutexLock lock(&credentials_mu_);
  EXPECT_TRUE(transport_credentials_.empty());  // nothing left aevatar
}

TEST_F(VaultKeyRunTest, AStopWhileTheVaultIsDownBeforeTheSubmitNeverStartsTheProgram) {
  std::atomic<int> reads{0};
  agent_keys_ = [&](const std::string&) -> absl::StatusOr<std::string> {
    // Admission reads the key; then the vault goes down before the submit.
    if (++reads == 1) return std::string("nyxid_ag_first");
    return absl::UnavailableError("the vault is down");
  };
  runtime_ = MakeRuntime();
  const std::string run_id = StartUnattended();
  RunUntil([&] { return reads.load() >= 3; });  // the submit's turn failed twice
  ASSERT_GE(reads.load(), 3);
  ASSERT_TRUE(runtime_->RequestStop(run_id, "user-1").ok());
  RunUntil([&] { return Phase(run_id) == "stopped"; });
  ASSERT_EQ(Phase(run_id), "stopped");
  // Nothing was dispatched, so the stop ends the step at once, audited as
  // never started and safe to retry; it never sends the submit itself.
  EXPECT_EQ(executor_.CountOf("submit"), 0);
  auto records = audit_->ForRun(run_id);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  const nlohmann::json& payload = records->front().fact["tool_payload"];
  EXPECT_EQ(payload["failure"]["code"], "code_execution_cancelled_before_submit");
  EXPECT_EQ(payload["mutation"]["may_have_executed"], false);
  EXPECT_EQ(payload["retryable"], true);
}

}  // namespace
}  // namespace aevatar::orchestrator::testing
