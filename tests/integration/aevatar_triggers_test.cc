// Unattended workflow runs through the three real binaries: a signed webhook
// and a per-minute schedule each start a run that executes with the owner's
// Vault-backed Agent Key (kind AgentKey: chrono injects it as the program's
// NYXID_API_KEY, which it does only for a forwarded Agent Key) and is
// audited as such; refused deliveries are typed; an owner without a key in
// the vault gets a failed, audited run instead of a silent skip.
#include <chrono>
#include <ctime>
#include <thread>

#include "aevatar/triggers/webhook_signature.h"
#include "aevatar_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;
using orchestrator::kWebhookSignatureHeader;
using orchestrator::kWebhookSignatureInvalid;
using orchestrator::kWebhookSignatureStale;
using orchestrator::SignWebhook;

// Prints whether the program got a NyxID key (never the key).
std::string ProbeWorkflow(const std::string& id, const std::string& trigger) {
  return "workflow_id: " + id +
         "\nsteps:\n  - id: probe\n    tool: code_execute\n    arguments:\n"
         "      language: bash\n"
         "      source: 'if [ -n \"$NYXID_API_KEY\" ]; then echo key=set; else echo key=unset; "
         "fi'\n"
         "triggers:\n  - " +
         trigger + "\n";
}

int64_t NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

class AevatarTriggers : public ::testing::Test {
 protected:
  void SetUp() override {
    stack_ = std::make_unique<AevatarStack>(kAliceWithChronoRoute);
    ASSERT_TRUE(stack_->ok());
    token_ = stack_->Login("alice");
    ASSERT_FALSE(token_.empty());
  }
  json Save(const std::string& yaml) {
    auto r =
        stack_->Aevatar("POST", "/api/workflows", token_, json{{"workflow_yaml", yaml}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return JsonOf(r);
  }
  http::ClientResponse Deliver(const std::string& hook_id, const std::string& body,
                               const std::string& signature) {
    http::ClientRequest request;
    request.method = "POST";
    request.url = stack_->aevatar().base_url() + "/api/hooks/" + hook_id;
    request.body = body;
    request.timeout = std::chrono::seconds(60);
    if (!signature.empty()) request.headers.Set(kWebhookSignatureHeader, signature);
    auto response = http::Fetch(request);
    if (!response.ok()) return {0, {}, std::string(response.status().message())};
    return *response;
  }
  json WaitDone(const std::string& run_id, int seconds = 120) {
    json run;
    for (int i = 0; i < seconds * 5; ++i) {
      run = JsonOf(stack_->Aevatar("GET", "/api/workflow-runs/" + run_id, token_));
      if (run.value("done", false)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return run;
  }
  json Audit(const std::string& run_id) {
    return JsonOf(stack_->Aevatar("GET", "/api/audit?run_id=" + run_id, token_))
        .value("records", json::array());
  }
  // The credential kinds the run's terminal tool audit records name.
  std::vector<std::string> AuditedKinds(const std::string& run_id) {
    std::vector<std::string> kinds;
    for (const json& record : Audit(run_id)) {
      if (record.value("kind", "") != "tool.terminal") continue;
      const json& fact = record["fact"];
      const json& payload = fact.contains("tool_payload") ? fact["tool_payload"] : fact;
      kinds.push_back(payload.contains("receipt") ? payload["receipt"].value("credential_kind", "")
                                                  : fact.dump());
    }
    return kinds;
  }

  std::unique_ptr<AevatarStack> stack_;
  std::string token_;
};

TEST_F(AevatarTriggers, SignedWebhookRunsWithTheVaultAgentKeyAndRefusalsAreTyped) {
  json saved = Save(ProbeWorkflow("hooked", "webhook: {}"));
  ASSERT_EQ(saved["triggers"].size(), 1u) << saved.dump();
  const std::string hook_id = saved["triggers"][0].value("hook_id", "");
  const std::string secret = saved["triggers"][0].value("secret", "");
  ASSERT_FALSE(hook_id.empty());
  ASSERT_EQ(secret.rfind("whsec_", 0), 0u);
  // Retrievable by the owner only.
  auto listed = stack_->Aevatar("GET", "/api/workflows/hooked/triggers", token_);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(JsonOf(listed)["triggers"][0].value("secret", ""), secret);
  EXPECT_EQ(stack_->Aevatar("GET", "/api/workflows/hooked/triggers", "").status, 401);

  // No Agent Key in the vault yet: a failed run, typed and audited.
  const std::string body = "{}";
  auto no_key = Deliver(hook_id, body, SignWebhook(secret, NowSeconds(), body));
  ASSERT_EQ(no_key.status, 202) << no_key.body;
  EXPECT_EQ(JsonOf(no_key).value("status", ""), "failed");
  EXPECT_EQ(JsonOf(no_key).value("outcome_code", ""), "unattended_agent_key_missing");
  const std::string failed_id = JsonOf(no_key).value("run_id", "");
  json failed = WaitDone(failed_id);
  EXPECT_EQ(failed.value("status", ""), "failed");
  EXPECT_EQ(failed.value("outcome_code", ""), "unattended_agent_key_missing");
  json failed_audit = Audit(failed_id);
  ASSERT_EQ(failed_audit.size(), 1u) << failed_audit.dump();
  EXPECT_EQ(failed_audit[0].value("kind", ""), "trigger.start_failed");
  EXPECT_EQ(failed_audit[0]["fact"].value("credential_kind", ""), "AgentKey");

  // The owner puts an Agent Key in the vault (a human login).
  auto ensured = stack_->Aevatar("POST", "/api/triggers/agent-key", token_);
  ASSERT_EQ(ensured.status, 200) << ensured.body;
  EXPECT_EQ(JsonOf(ensured).value("action", ""), "created");
  EXPECT_EQ(ensured.body.find("nyxid_ag_"), std::string::npos);

  // Another delivery (a signature is accepted once: same second, same body
  // would be a replay).
  const std::string second = R"({"delivery": 2})";
  const std::string signature = SignWebhook(secret, NowSeconds(), second);
  auto fired = Deliver(hook_id, second, signature);
  ASSERT_EQ(fired.status, 202) << fired.body;
  const std::string run_id = JsonOf(fired).value("run_id", "");
  json run = WaitDone(run_id);
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][0]["output"].value("stdout", ""), "key=set\n");
  EXPECT_EQ(AuditedKinds(run_id), std::vector<std::string>{"AgentKey"});

  // The same delivery again, a wrong secret, a stale one, none, an unknown hook.
  ExpectProblem(Deliver(hook_id, second, signature), 409, "WEBHOOK_REPLAYED");
  // Re-spelled, it is still the same delivery: another scheme appended,
  // spaces, the entries reordered or repeated.
  const std::string mac = signature.substr(signature.find("v1="));
  const std::string t = signature.substr(0, signature.find(','));
  for (const std::string& respelled :
       {signature + ",v0=x", " " + signature + " ", mac + "," + t, signature + "," + mac}) {
    ExpectProblem(Deliver(hook_id, second, respelled), 409, "WEBHOOK_REPLAYED");
  }
  // `t` with a leading zero is not a spelling the parser accepts.
  ExpectProblem(Deliver(hook_id, second, "t=0" + t.substr(2) + "," + mac), 401,
                kWebhookSignatureInvalid);
  ExpectProblem(Deliver(hook_id, body, SignWebhook("whsec_wrong", NowSeconds(), body)), 401,
                kWebhookSignatureInvalid);
  ExpectProblem(Deliver(hook_id, body, SignWebhook(secret, NowSeconds() - 600, body)), 401,
                kWebhookSignatureStale);
  ExpectProblem(Deliver(hook_id, body, ""), 401, kWebhookSignatureInvalid);
  ExpectProblem(Deliver("hook_unknown", body, SignWebhook(secret, NowSeconds(), body)), 404,
                "WEBHOOK_NOT_FOUND");
  // A signed body of the wrong shape is a typed 400, never a 500.
  const std::string bad = R"({"inputs": 5})";
  const std::string bad_signature = SignWebhook(secret, NowSeconds(), bad);
  ExpectProblem(Deliver(hook_id, bad, bad_signature), 400, "INVALID_FIELD_TYPE");
  // A refused delivery is not remembered: sent again it is refused for its
  // body again, not as a replay.
  ExpectProblem(Deliver(hook_id, bad, bad_signature), 400, "INVALID_FIELD_TYPE");
  // The secret never reaches the log.
  EXPECT_EQ(stack_->aevatar().ReadLog().find(secret), std::string::npos);
}

TEST_F(AevatarTriggers, PerMinuteScheduleFiresARunWithTheVaultAgentKey) {
  auto bad = stack_->Aevatar(
      "POST", "/api/workflows", token_,
      json{{"workflow_yaml", ProbeWorkflow("bad-cron", "cron: '61 * * * *'")}}.dump());
  ExpectProblem(bad, 400, "WORKFLOW_TRIGGER_INVALID");
  ASSERT_EQ(stack_->Aevatar("POST", "/api/triggers/agent-key", token_).status, 200);
  json saved = Save(ProbeWorkflow("every-minute", "cron: '* * * * *'"));
  ASSERT_EQ(saved["triggers"][0].value("cron", ""), "* * * * *") << saved.dump();
  // The next minute boundary fires it (within ~60 s, plus a loaded machine).
  std::string run_id;
  for (int i = 0; i < 150 * 2 && run_id.empty(); ++i) {
    json runs = JsonOf(stack_->Aevatar("GET", "/api/workflow-runs", token_));
    for (const json& r : runs.value("runs", json::array())) {
      if (r.value("workflow_id", "") == "every-minute") run_id = r.value("run_id", "");
    }
    if (run_id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_FALSE(run_id.empty()) << "the schedule never fired";
  json run = WaitDone(run_id);
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][0]["output"].value("stdout", ""), "key=set\n");
  EXPECT_EQ(AuditedKinds(run_id), std::vector<std::string>{"AgentKey"});
}

}  // namespace
}  // namespace aevatar::testing
