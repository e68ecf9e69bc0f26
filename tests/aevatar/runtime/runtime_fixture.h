#ifndef AEVATAR_TESTS_AEVATAR_RUNTIME_RUNTIME_FIXTURE_H_
#define AEVATAR_TESTS_AEVATAR_RUNTIME_RUNTIME_FIXTURE_H_

// The workflow runtime driven turn by turn under a controlled clock, against
// a test double of the executor (fake_executor.h by default, or a scripted
// one) and the real SQLite stores. Shared by the runtime's test files.

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "aevatar/admission/admission_proof.h"
#include "aevatar/audit/sqlite_audit_log.h"
#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "base/crypto.h"
#include "fake_executor.h"
#include "gtest/gtest.h"
#include "scripted_executor.h"

namespace aevatar::orchestrator::testing {

inline constexpr char kOneStepWorkflow[] = R"yaml(
workflow_id: runtime-check
inputs:
  - {name: marker, type: string, default: MARKER_DEFAULT}
steps:
  - id: first
    tool: code_execute
    arguments:
      language: bash
      source: "echo ${inputs.marker}"
      timeout_secs: 30
    expect:
      equals: {status: succeeded}
)yaml";

inline constexpr char kTwoStepWorkflow[] = R"yaml(
workflow_id: runtime-two-steps
steps:
  - id: first
    tool: code_execute
    arguments: {language: bash, source: "echo one", timeout_secs: 30}
  - id: second
    tool: code_execute
    arguments: {language: bash, source: "echo two", timeout_secs: 30}
)yaml";

// The route every test run is admitted on.
inline AdmittedRoute TestRoute() { return {"us_route_1", "chrono-sandbox", "chrono-sandbox"}; }

// NyxID facts under which user-1 may use TestRoute(): its own active route
// with the full credential contract.
inline NyxidFacts GrantingFacts() {
  RouteFacts route;
  route.id = "us_route_1";
  route.slug = "chrono-sandbox";
  route.label = "chrono-sandbox";
  route.catalog_service_id = "chrono-sandbox";
  route.owner_type = "user";
  route.owner_id = "user-1";
  route.active = true;
  route.forward_access_token = true;
  route.inject_delegation_token = true;
  route.scopes = {"proxy:*", "sandbox:execute"};
  NyxidFacts facts;
  facts.caller.user_id = "user-1";
  facts.inventory.push_back(route);
  return facts;
}

// Forwards every exchange to a transport the test owns (the runtime asks for
// a fresh transport each turn).
class ForwardingTransport : public ExecutionsTransport {
 public:
  explicit ForwardingTransport(ExecutionsTransport* target) : target_(target) {}
  NyxidReply Submit(const std::string& key, const nlohmann::json& body) override {
    return target_->Submit(key, body);
  }
  NyxidReply Status(const std::string& id, const std::string& inm) override {
    return target_->Status(id, inm);
  }
  NyxidReply Result(const std::string& id) override { return target_->Result(id); }
  NyxidReply Cancel(const std::string& id, int64_t deadline) override {
    return target_->Cancel(id, deadline);
  }

 private:
  ExecutionsTransport* target_;
};

// A transport whose every exchange throws: stands for a bug below the turn.
// `on_call` runs first, to record the attempt.
class ThrowingTransport : public ExecutionsTransport {
 public:
  explicit ThrowingTransport(std::function<void()> on_call) : on_call_(std::move(on_call)) {}
  NyxidReply Submit(const std::string&, const nlohmann::json&) override { return Throw(); }
  NyxidReply Status(const std::string&, const std::string&) override { return Throw(); }
  NyxidReply Result(const std::string&) override { return Throw(); }
  NyxidReply Cancel(const std::string&, int64_t) override { return Throw(); }

 private:
  NyxidReply Throw() {
    on_call_();
    throw std::runtime_error("transport bug");
  }
  std::function<void()> on_call_;
};

class RuntimeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/workflow_runtime_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = OpenSqliteWorkflowStore(dir_ + "/workflows.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto audit = OpenSqliteAuditLog(dir_ + "/audit.db");
    ASSERT_TRUE(audit.ok()) << audit.status();
    audit_ = std::move(*audit);
    flaky_ = std::make_unique<FlakyAuditLog>(audit_.get());
    vault_ = std::make_shared<VaultKeyring>(base::RandomBytes(32));
    executor_.clock = &now_;
    runtime_ = MakeRuntime();
    UseWorkflow(kOneStepWorkflow);
  }
  void TearDown() override {
    runtime_.reset();
    std::filesystem::remove_all(dir_);
  }

  void UseWorkflow(const char* yaml) {
    auto definition = ParseWorkflowYaml(yaml);
    ASSERT_TRUE(definition.ok()) << definition.status();
    definition_ = *definition;
  }

  std::unique_ptr<WorkflowRuntime> MakeRuntime() {
    WorkflowRuntime::Options options;
    options.vault = vault_;
    options.stop_window_ms = 10'000;
    options.poll_interval_ms = 5;
    if (codex_) {
      options.codex = [this](const std::string& user, const CodexExecArgs& args,
                             const std::string& key, const std::string& diagnostic_id,
                             std::chrono::milliseconds budget,
                             const std::vector<std::string>& caller_services) {
        return codex_(user, args, key, diagnostic_id, budget, caller_services);
      };
    }
    if (codex_cancel_) {
      options.codex_cancel = [this](const std::string& user, const std::string& key,
                                    const std::string& diagnostic_id,
                                    const std::vector<std::string>& caller_services) {
        return codex_cancel_(user, key, diagnostic_id, caller_services);
      };
    }
    options.approvals = approvals_;
    if (agent_keys_) {
      options.agent_keys = [this](const std::string& owner) { return agent_keys_(owner); };
    }
    if (private_ssh_) {
      options.private_ssh = [this](const std::string& credential, const CodexExecArgs& args,
                                   std::chrono::milliseconds budget) {
        return private_ssh_(credential, args, budget);
      };
    }
    return std::make_unique<WorkflowRuntime>(
        options, store_.get(), flaky_.get(),
        [this](const AdmittedRoute&,
               const std::string& credential) -> std::unique_ptr<ExecutionsTransport> {
          {
            absl::MutexLock lock(&credentials_mu_);
            transport_credentials_.push_back(credential);
          }
          if (throwing_) {
            return std::make_unique<ThrowingTransport>([this] { thrown_at_.push_back(now_); });
          }
          if (scripted_ != nullptr) return std::make_unique<ForwardingTransport>(scripted_);
          return executor_.Transport();
        },
        [this](const std::string& credential) -> absl::StatusOr<NyxidFacts> {
          ++facts_reads_;
          if (!read_facts_) return absl::UnavailableError("no NyxID in this test");
          return read_facts_(credential);
        },
        [this] { return now_.load(); });
  }

  std::string Start(const std::string& marker = "MARKER_DEFAULT",
                    CredentialKind kind = CredentialKind::kProxyDelegation,
                    const std::vector<std::string>& allowed_services = {}) {
    Caller caller{kind, "user-1", "credential-secret-xyz", false, allowed_services};
    nlohmann::json proof = MakeAdmissionProof(TestRoute(), now_);
    auto catalog = CatalogFromFacts(GrantingFacts(), TestRoute(), now_);
    EXPECT_TRUE(catalog.ok()) << catalog.status();
    nlohmann::json values = nlohmann::json::object();
    for (const WorkflowInput& input : definition_.inputs) {
      if (input.name == "marker") values["marker"] = marker;
    }
    auto inputs = BindInputs(definition_, values);
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    auto run_id = runtime_->StartRun(caller, definition_, *inputs, proof, *catalog);
    EXPECT_TRUE(run_id.ok()) << run_id.status();
    return run_id.ok() ? *run_id : "";
  }

  // Advances the clock in 1 s ticks, running due turns, until `done` or 120 ticks.
  void RunUntil(const std::function<bool()>& done) {
    for (int tick = 0; tick < 120 && !done(); ++tick) {
      runtime_->DrainDueForTest();
      now_ += 1000;
    }
    runtime_->DrainDueForTest();
  }

  std::string Phase(const std::string& run_id) {
    auto run = store_->GetRun(run_id);
    return run.ok() ? run->phase : "missing";
  }
  nlohmann::json State(const std::string& run_id) {
    auto run = store_->GetRun(run_id);
    return run.ok() ? run->state : nlohmann::json();
  }
  // The fact of the run's tool.terminal audit record, or null.
  nlohmann::json TerminalFactOf(const std::string& run_id) {
    auto records = audit_->ForRun(run_id);
    EXPECT_TRUE(records.ok());
    if (!records.ok()) return nullptr;
    for (const AuditRecord& record : *records) {
      if (record.kind == "tool.terminal") return record.fact;
    }
    return nullptr;
  }
  int EventCount(const std::string& run_id, const std::string& type) {
    auto events = store_->EventsAfter(run_id, 0);
    int n = 0;
    if (events.ok()) {
      for (const RunEvent& e : *events) n += e.type == type;
    }
    return n;
  }

  std::string dir_;
  std::atomic<int64_t> now_{1'800'000'000'000};
  std::shared_ptr<VaultKeyring> vault_;
  FakeExecutor executor_;
  ScriptedExecutor* scripted_ = nullptr;  // when set, answers instead of executor_
  std::atomic<bool> throwing_{false};     // when set, every exchange throws
  std::vector<int64_t> thrown_at_;        // the clock at each throwing exchange
  // The runtime re-read of HumanBearer runs; unset: NyxID is unavailable.
  std::function<absl::StatusOr<NyxidFacts>(const std::string&)> read_facts_;
  std::atomic<int> facts_reads_{0};
  // Managed codex_exec for codex_exec steps (set before MakeRuntime); unset:
  // managed Codex is off.
  WorkflowRuntime::CodexExecutor codex_;
  // Stops of running codex_exec steps (set before MakeRuntime); unset: none.
  WorkflowRuntime::CodexCanceller codex_cancel_;
  // private_ssh codex_exec steps (set both before MakeRuntime); unset: the
  // target is not configured.
  ApprovalStore* approvals_ = nullptr;
  WorkflowRuntime::PrivateSshExecutor private_ssh_;
  // Unattended runs' Vault-backed keys (set before MakeRuntime).
  WorkflowRuntime::AgentKeyResolver agent_keys_;
  // The credential of every transport made, in order.
  absl::Mutex credentials_mu_;
  std::vector<std::string> transport_credentials_ ABSL_GUARDED_BY(credentials_mu_);
  std::unique_ptr<WorkflowStore> store_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<FlakyAuditLog> flaky_;
  std::unique_ptr<WorkflowRuntime> runtime_;
  WorkflowDefinition definition_;
};

}  // namespace aevatar::orchestrator::testing

#endif  // AEVATAR_TESTS_AEVATAR_RUNTIME_RUNTIME_FIXTURE_H_
