#include "aevatar/codex/managed_codex.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "aevatar/codex/managed_cancel.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/log.h"
#include "codex/fake_nyxid.h"
#include "gtest/gtest.h"

// Managed codex_exec against a NyxID stand-in that plays the proxy and
// chrono-sandbox: eligibility, the credential lifecycle, the execution
// request and every typed error mapped from a scripted reply.
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;
using testing::FakeNyxid;
using testing::kChronoRouteId;
using testing::kHumanToken;
using testing::kLlmRouteId;
using testing::kUser;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ManagedCodexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nyxid_.ok());
    char tmpl[] = "/tmp/managed_codex_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // Every log line of the test goes to a file the tests grep.
    log_path_ = dir_ + "/log.jsonl";
    log_fd_ = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ASSERT_GE(log_fd_, 0);
    base::ConfigureLog(base::LogLevel::kDebug, log_fd_);
    auto vault = OpenSqliteCredentialVault(dir_ + "/codex.db",
                                           std::make_shared<VaultKeyring>(base::RandomBytes(32)));
    ASSERT_TRUE(vault.ok()) << vault.status();
    vault_ = std::move(*vault);
    client_ = std::make_unique<NyxidClient>(nyxid_.url(), "");
    config_.policy.mode = EligibilityMode::kAll;
    // Deadlines far past any exchange of a slow sanitizer run; the tests of
    // the deadlines scale them down (ScaleDownDeadlines).
    config_.deadlines.request = std::chrono::seconds(20);
    config_.deadlines.client = std::chrono::seconds(25);
    Remake();
  }
  void TearDown() override {
    base::ConfigureLog(base::LogLevel::kInfo, 2);
    ::close(log_fd_);
    std::filesystem::remove_all(dir_);
  }

  // The chain keeps its order, the test its pace.
  void ScaleDownDeadlines() {
    config_.deadlines.request = std::chrono::milliseconds(400);
    config_.deadlines.client = std::chrono::milliseconds(500);
    Remake();
  }

  void Remake() {
    codex_ = std::make_unique<ManagedCodex>(client_.get(), vault_.get(), config_,
                                            [] { return int64_t{1000}; });
  }

  Caller Human() const { return {CredentialKind::kHumanBearer, kUser, kHumanToken, true}; }

  CodexExecArgs Args(int timeout_secs = 1) const {
    CodexExecArgs args;
    args.prompt = "Reply with exactly CODEX_EXEC_READY";
    args.timeout_secs = timeout_secs;
    return args;
  }

  std::string ErrorCode(const absl::StatusOr<ManagedCodexResult>& result) {
    return result.ok() ? "OK" : base::ApiCode(result.status());
  }

  // Provisions the credential, then scripts chrono-sandbox's reply.
  std::string ExecuteAgainst(FakeNyxid::CodexHandler handler) {
    EXPECT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
    nyxid_.OnCodexExecute(std::move(handler));
    return ErrorCode(codex_->Execute(kUser, Args(), "key-1", "diag_t"));
  }

  FakeNyxid nyxid_;
  std::string dir_, log_path_;
  int log_fd_ = -1;
  std::unique_ptr<ManagedCredentialVault> vault_;
  std::unique_ptr<NyxidClient> client_;
  ManagedCodexConfig config_;
  std::unique_ptr<ManagedCodex> codex_;
};

TEST(ManagedCodexPolicy, OffDisablesAllowlistAdmitsOnlyItsUsersAllAdmitsEveryone) {
  auto off = ParseManagedCodexPolicy("off", "");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(base::ApiCode(off->Check("u")), kManagedTargetDisabled);
  auto listed = ParseManagedCodexPolicy("allowlist", " alice, bob ,");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->Check("alice").ok());
  EXPECT_TRUE(listed->Check("bob").ok());
  EXPECT_EQ(base::ApiCode(listed->Check("carol")), kManagedFeatureNotEnabled);
  EXPECT_EQ(listed->ModeName(), "Allowlist");
  auto all = ParseManagedCodexPolicy("all", "");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Check("anyone").ok());
  EXPECT_FALSE(ParseManagedCodexPolicy("sometimes", "").ok());
  EXPECT_FALSE(ParseManagedCodexPolicy("all", "alice").ok());
}

TEST_F(ManagedCodexTest, DisabledAndIneligibleCallersFailTypedBeforeAnyNetworkCall) {
  config_.policy = *ParseManagedCodexPolicy("off", "");
  Remake();
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")), kManagedTargetDisabled);
  EXPECT_EQ(base::ApiCode(codex_->EnsureCredential(Human(), "diag_t").status()),
            kManagedTargetDisabled);
  EXPECT_EQ(codex_->CredentialStatus(kUser)["execution_readiness_reason"], kManagedTargetDisabled);
  config_.policy = *ParseManagedCodexPolicy("allowlist", "someone-else");
  Remake();
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")), kManagedFeatureNotEnabled);
  EXPECT_EQ(base::ApiCode(codex_->EnsureCredential(Human(), "diag_t").status()),
            kManagedFeatureNotEnabled);
  const json status = codex_->CredentialStatus(kUser);
  EXPECT_EQ(status["execution_readiness_reason"], kManagedFeatureNotEnabled);
  EXPECT_EQ(status["execution_ready"], false);
  EXPECT_EQ(nyxid_.Count(), 0);
}

TEST_F(ManagedCodexTest, PrivateSshIsNotConfiguredYet) {
  CodexExecArgs args = Args();
  args.target = CodexTarget::kPrivateSsh;
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, args, "k", "diag_t")), kTargetNotConfigured);
  EXPECT_EQ(nyxid_.Count(), 0);
}

TEST_F(ManagedCodexTest, CredentialLifecycleIsIdempotentAndReconciles) {
  EXPECT_EQ(codex_->CredentialStatus(kUser)["execution_readiness_reason"],
            "managed_credential_missing");
  auto first = codex_->EnsureCredential(Human(), "diag_t");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)["action"], "created");
  EXPECT_EQ((*first)["status"], "active");
  EXPECT_EQ((*first)["execution_ready"], true);
  EXPECT_EQ((*first)["execution_readiness_reason"], "ready");
  auto second = codex_->EnsureCredential(Human(), "diag_t");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)["action"], "unchanged");
  ASSERT_EQ(nyxid_.MintedKeys().size(), 1u);
  // The key NyxID minted is restricted to exactly the chrono-sandbox route.
  int creates = 0;
  for (const auto& request : nyxid_.Requests()) {
    if (request.method == "POST" && request.path == "/api/v1/agent-keys") {
      ++creates;
      EXPECT_EQ(json::parse(request.body)["allowed_services"], json::array({kChronoRouteId}));
    }
  }
  EXPECT_EQ(creates, 1);
  // Revoked at NyxID: GET says so (read-only), POST replaces it.
  nyxid_.RevokeAllKeys();
  const json revoked = codex_->CredentialStatus(kUser);
  EXPECT_EQ(revoked["status"], "active");  // status alone is not readiness
  EXPECT_EQ(revoked["execution_ready"], false);
  EXPECT_EQ(revoked["execution_readiness_reason"], kManagedCredentialUnavailable);
  EXPECT_EQ(nyxid_.MintedKeys().size(), 1u);
  auto third = codex_->EnsureCredential(Human(), "diag_t");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)["action"], "replaced");
  EXPECT_EQ((*third)["execution_readiness_reason"], "ready");
  EXPECT_EQ(nyxid_.MintedKeys().size(), 2u);
}

TEST_F(ManagedCodexTest, ConcurrentProvisioningMintsOneKey) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] { ok += codex_->EnsureCredential(Human(), "diag_t").ok() ? 1 : 0; });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(nyxid_.MintedKeys().size(), 1u);
}

TEST_F(ManagedCodexTest, ProvisioningNeedsAHumanLoginAndAnOwnedChronoRoute) {
  Caller agent{CredentialKind::kAgentKey, kUser, "nyxid_ag_other", false};
  EXPECT_EQ(base::ApiCode(codex_->EnsureCredential(agent, "diag_t").status()),
            "MANAGED_CREDENTIAL_HUMAN_TOKEN_REQUIRED");
  json foreign = FakeNyxid::ChronoRoute();
  foreign["owner"]["id"] = "someone-else";
  nyxid_.SetRoutes({foreign, FakeNyxid::LlmRoute()});
  EXPECT_EQ(base::ApiCode(codex_->EnsureCredential(Human(), "diag_t").status()),
            kManagedUserServicesUnavailable);
  EXPECT_TRUE(nyxid_.MintedKeys().empty());
}

TEST_F(ManagedCodexTest, ReadinessDistinguishesMissingServicesAndTheModelRoute) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  nyxid_.SetRoutes({FakeNyxid::ChronoRoute()});
  const json no_llm = codex_->CredentialStatus(kUser);
  EXPECT_EQ(no_llm["execution_readiness_reason"], "managed_llm_route_unavailable");
  EXPECT_NE(no_llm["remediation"].get<std::string>().find("--llm-upstream"), std::string::npos);
  json no_forward = FakeNyxid::ChronoRoute();
  no_forward["forward_access_token"] = false;
  nyxid_.SetRoutes({no_forward, FakeNyxid::LlmRoute()});
  EXPECT_EQ(codex_->CredentialStatus(kUser)["execution_readiness_reason"],
            kManagedUserServicesUnavailable);
  json no_proxy_scope = FakeNyxid::ChronoRoute();
  no_proxy_scope["delegation_token_scope"] = "sandbox:execute";
  nyxid_.SetRoutes({no_proxy_scope, FakeNyxid::LlmRoute()});
  EXPECT_EQ(codex_->CredentialStatus(kUser)["execution_readiness_reason"],
            kManagedUserServicesUnavailable);
}

TEST_F(ManagedCodexTest, ExecutionSendsTheExactContractRequest) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  const std::string key = nyxid_.MintedKeys().at(0);
  auto result = codex_->Execute(kUser, Args(180), "step-key-1", "diag_t");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, "succeeded");
  EXPECT_EQ(result->target, "managed_sandbox");
  EXPECT_EQ(result->output, "CODEX_EXEC_READY\n");
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->diagnostic_id, "diag_runner123");
  EXPECT_TRUE(ManagedOutcome(*result).ok());
  int proxied = 0;
  for (const auto& request : nyxid_.Requests()) {
    if (request.path.rfind("/api/v1/proxy/", 0) != 0) continue;
    ++proxied;
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.path, "/api/v1/proxy/chrono-sandbox/codex/execute");
    EXPECT_EQ(request.query, std::string("_nyxid_via=") + kChronoRouteId);
    EXPECT_EQ(request.authorization, key);
    EXPECT_EQ(request.idempotency_key, "step-key-1");
    EXPECT_EQ(json::parse(request.body), json({{"prompt", "Reply with exactly CODEX_EXEC_READY"},
                                               {"timeout_secs", 180},
                                               {"model_route", {{"user_service_id", kLlmRouteId}}},
                                               {"run_id", ManagedRunId("step-key-1")}}));
    EXPECT_EQ(request.body.find(key), std::string::npos);  // never in the chrono body
  }
  EXPECT_EQ(proxied, 1);
}

// NyxID sees only the managed key, so aevatar checks the caller's: a key
// restricted to other services runs nothing, one naming the chrono-sandbox
// route by id or slug runs, and so does an unrestricted caller.
TEST_F(ManagedCodexTest, ARestrictedCallerKeyMustNameTheChronoRouteByIdOrSlug) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  const auto run_as = [&](const std::vector<std::string>& services) {
    return codex_->Execute(kUser, Args(), "k", "diag_t", std::nullopt, services);
  };
  const auto refused = run_as({"some-other-service", "chrono-llm-public"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(base::ApiCode(refused.status()), "AGENT_KEY_SERVICE_NOT_ALLOWED");
  EXPECT_EQ(base::HttpStatusFor(refused.status()), 403);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0) << "a refused key reached the proxy";
  for (const std::vector<std::string>& allowed :
       {std::vector<std::string>{kChronoRouteId}, std::vector<std::string>{"x", "chrono-sandbox"},
        std::vector<std::string>{}}) {
    EXPECT_EQ(ErrorCode(run_as(allowed)), "OK") << allowed.size();
  }
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 3);
}

TEST_F(ManagedCodexTest, NormalExecutionIsCredentialReadOnly) {
  // No credential: typed, and nothing is minted.
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")),
            kManagedCredentialUnavailable);
  EXPECT_TRUE(nyxid_.MintedKeys().empty());
  EXPECT_EQ(nyxid_.Count("/api/v1/agent-keys"), 0);
  // Revoked: typed, and neither repaired nor retried.
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  nyxid_.RevokeAllKeys();
  const int agent_key_calls = nyxid_.Count("/api/v1/agent-keys");
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")),
            kManagedCredentialUnavailable);
  EXPECT_EQ(nyxid_.Count("/api/v1/agent-keys"), agent_key_calls);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0);
}

TEST_F(ManagedCodexTest, MissingUserServicesAreTyped) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  nyxid_.SetRoutes({FakeNyxid::ChronoRoute()});
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")),
            kManagedUserServicesUnavailable);
  json second_llm = FakeNyxid::LlmRoute();
  second_llm["id"] = "us_llm_2";
  nyxid_.SetRoutes({FakeNyxid::ChronoRoute(), FakeNyxid::LlmRoute(), second_llm});
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")),
            kManagedUserServicesUnavailable);
  json inactive = FakeNyxid::ChronoRoute();
  inactive["active"] = false;
  nyxid_.SetRoutes({inactive, FakeNyxid::LlmRoute()});
  EXPECT_EQ(ErrorCode(codex_->Execute(kUser, Args(), "k", "diag_t")),
            kManagedUserServicesUnavailable);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0);
}

TEST_F(ManagedCodexTest, EachProxyOrRunnerReplyMapsToExactlyOneTypedError) {
  struct Case {
    int status;
    json body;
    const char* code;
  };
  const json ok = {{"status", "succeeded"},
                   {"target", "managed_sandbox"},
                   {"output", "x"},
                   {"exit_code", 0},
                   {"diagnostic_id", "diag_r1"}};
  json wrong_target = ok;
  wrong_target["target"] = "private_ssh";
  json no_diag = ok;
  no_diag.erase("diagnostic_id");
  json bad_diag = ok;
  bad_diag["diagnostic_id"] = "diag_<script>";
  json exit_type = ok;
  exit_type["exit_code"] = "0";
  json lying = ok;
  lying["exit_code"] = 3;
  json big_output = ok;
  big_output["output"] = std::string(kMaxManagedOutputBytes + 1, 'a');
  json failed = ok;
  failed["status"] = "failed";
  failed["exit_code"] = 1;
  const Case cases[] = {
      {401, {{"code", "TOKEN_INVALID"}}, kManagedProxyAuthorizationDenied},
      {403, {{"code", "DELEGATION_SCOPE_MISSING"}}, kManagedProxyAuthorizationDenied},
      {404, {{"code", "NOT_FOUND"}}, kManagedProxyTargetUnavailable},
      {410, json::object(), kManagedProxyTargetUnavailable},
      {400, {{"code", "CODEX_REQUEST_INVALID"}}, kManagedProxyTargetUnavailable},
      {429, {{"code", "CODEX_RUNNER_BUSY"}}, kManagedProxyUnavailable},
      {503, {{"code", "CODEX_RUNNER_UNAVAILABLE"}}, kManagedProxyUnavailable},
      {502, json::object(), kManagedProxyUnavailable},
      {504, json::object(), kManagedProxyTimeout},
      {200, json::array({1}), kManagedResponseInvalid},
      {200, wrong_target, kManagedResponseInvalid},
      {200, no_diag, kManagedResponseInvalid},
      {200, bad_diag, kManagedResponseInvalid},
      {200, exit_type, kManagedResponseInvalid},
      {200, lying, kManagedResponseInvalid},
      {200, big_output, kManagedResponseTooLarge},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(
        ExecuteAgainst([&](const http::Request&) { return FakeNyxid::Reply(c.status, c.body); }),
        c.code)
        << c.status << " " << c.body.dump().substr(0, 80);
  }
  // A terminal non-zero exit is a result, and its typed outcome.
  nyxid_.OnCodexExecute([&](const http::Request&) { return FakeNyxid::Reply(200, failed); });
  auto result = codex_->Execute(kUser, Args(), "k", "diag_t");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(base::ApiCode(ManagedOutcome(*result)), kManagedExecutionNonzeroExit);
  EXPECT_EQ(result->diagnostic_id, "diag_r1");
}

TEST_F(ManagedCodexTest, AnOversizedOrNonJsonBodyIsTypedNotACrash) {
  EXPECT_EQ(ExecuteAgainst([](const http::Request&) {
              return http::JsonResponse(200, std::string(kMaxManagedResponseBytes + 10, ' '));
            }),
            kManagedResponseTooLarge);
  EXPECT_EQ(ExecuteAgainst([](const http::Request&) { return http::JsonResponse(200, "<html>"); }),
            kManagedResponseInvalid);
  // A body far past the bound is cut off by the client, not buffered.
  EXPECT_EQ(ExecuteAgainst([](const http::Request&) {
              return http::JsonResponse(200, std::string(4 << 20, 'x'));
            }),
            kManagedResponseTooLarge);
}

TEST_F(ManagedCodexTest, ABudgetLongerThanTheDeadlineLeavesTheTimeoutToTheChain) {
  ScaleDownDeadlines();
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  auto release = std::make_shared<absl::Notification>();
  nyxid_.OnCodexExecute([release](const http::Request&) {
    release->WaitForNotificationWithTimeout(absl::Seconds(30));
    return FakeNyxid::Reply(200, json::object());
  });
  // The scaled request deadline (400 ms) binds, not the 20 s budget.
  auto result = codex_->Execute(kUser, Args(), "k", "diag_t", std::chrono::seconds(20));
  release->Notify();
  EXPECT_EQ(ErrorCode(result), kManagedProxyTimeout);
}

TEST_F(ManagedCodexTest, TheManagedRequestDeadlineObservesAHangingRunnerAsProxyTimeout) {
  ScaleDownDeadlines();
  auto release = std::make_shared<absl::Notification>();
  EXPECT_EQ(ExecuteAgainst([release](const http::Request&) {
              // Holds the exchange until the test ends (far past the scaled deadline).
              release->WaitForNotificationWithTimeout(absl::Seconds(30));
              return FakeNyxid::Reply(200, json::object());
            }),
            kManagedProxyTimeout);
  release->Notify();
}

TEST_F(ManagedCodexTest, AStepBudgetBelowTheDeadlineCapsTheExchange) {
  // Deadlines far beyond the test's hang guard: only the budget can end it.
  config_.deadlines.request = std::chrono::seconds(60);
  config_.deadlines.client = std::chrono::seconds(90);
  Remake();
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  auto release = std::make_shared<absl::Notification>();
  nyxid_.OnCodexExecute([release](const http::Request&) {
    release->WaitForNotificationWithTimeout(absl::Seconds(30));
    return FakeNyxid::Reply(200, json::object());
  });
  auto result = codex_->Execute(kUser, Args(), "k", "diag_t", std::chrono::milliseconds(300));
  release->Notify();
  // The budget, not a layer of the chain, ended it: the caller's own timeout.
  EXPECT_EQ(ErrorCode(result), kManagedBudgetExhausted);
}

// The caller's cancel goes to chrono-sandbox's cancel route for the run's id
// (again while the run is not registered yet: 404), with the same key and
// route; chrono's "cancelled" answer is the typed managed_execution_cancelled.
TEST_F(ManagedCodexTest, ACancelReachesTheRunThroughItsCancelRoute) {
  config_.deadlines.request = std::chrono::seconds(60);
  config_.deadlines.client = std::chrono::seconds(90);
  Remake();
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  struct Chrono {
    absl::Notification started, killed;
    absl::Mutex mu;
    int cancels ABSL_GUARDED_BY(mu) = 0;
  };
  auto chrono = std::make_shared<Chrono>();
  const std::string run_id = ManagedRunId("cancel-key");
  nyxid_.OnCodexExecute([chrono, run_id](const http::Request& request) {
    if (absl::EndsWith(request.path, "/codex/execute")) {
      chrono->started.Notify();
      const bool killed = chrono->killed.WaitForNotificationWithTimeout(absl::Seconds(30));
      return FakeNyxid::Reply(200, {{"status", killed ? "cancelled" : "failed"},
                                    {"target", "managed_sandbox"},
                                    {"output", ""},
                                    {"exit_code", 137},
                                    {"diagnostic_id", "diag_runner9"}});
    }
    if (request.path != "/api/v1/proxy/chrono-sandbox/codex/runs/" + run_id + "/cancel") {
      return FakeNyxid::Reply(404, {{"code", "CODEX_RUN_NOT_FOUND"}});
    }
    absl::MutexLock lock(&chrono->mu);
    // The first cancel comes "before the run registered".
    if (++chrono->cancels == 1) return FakeNyxid::Reply(404, {{"code", "CODEX_RUN_NOT_FOUND"}});
    if (!chrono->killed.HasBeenNotified()) chrono->killed.Notify();
    return FakeNyxid::Reply(202, {{"run_id", run_id}, {"status", "cancel_requested"}});
  });
  absl::Notification cancel;
  std::thread canceller([&] {
    chrono->started.WaitForNotificationWithTimeout(absl::Seconds(30));
    cancel.Notify();
  });
  auto result = codex_->Execute(kUser, Args(), "cancel-key", "diag_t", std::nullopt, {}, &cancel);
  canceller.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, "cancelled");
  EXPECT_EQ(base::ApiCode(ManagedOutcome(*result)), kManagedExecutionCancelled);
  EXPECT_EQ(base::HttpStatusFor(ManagedOutcome(*result)), 409);
  int cancels = 0;
  for (const auto& request : nyxid_.Requests()) {
    if (!absl::EndsWith(request.path, "/cancel")) continue;
    ++cancels;
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.query, std::string("_nyxid_via=") + kChronoRouteId);
    EXPECT_EQ(request.authorization, nyxid_.MintedKeys().at(0));
  }
  EXPECT_EQ(cancels, 2);
}

TEST_F(ManagedCodexTest, ACancelBeforeTheRunIsSentSendsNothing) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  absl::Notification cancel;
  cancel.Notify();
  auto result = codex_->Execute(kUser, Args(), "k", "diag_t", std::nullopt, {}, &cancel);
  EXPECT_EQ(ErrorCode(result), kManagedExecutionCancelled);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 0);
}

TEST_F(ManagedCodexTest, AnUnreachableProxyIsUnavailable) {
  ASSERT_TRUE(codex_->EnsureCredential(Human(), "diag_t").ok());
  // The inventory read works, the proxy connection is refused.
  nyxid_.SetRoutes({FakeNyxid::ChronoRoute(), FakeNyxid::LlmRoute()});
  NyxidClient dead("http://127.0.0.1:1", "");
  ManagedCodex codex(&dead, vault_.get(), config_, [] { return int64_t{1}; });
  EXPECT_EQ(ErrorCode(codex.Execute(kUser, Args(), "k", "diag_t")), kManagedProxyUnavailable);
}

TEST_F(ManagedCodexTest, TheKeyIsNeverInAnswersLogsOrTheVaultFile) {
  auto ensured = codex_->EnsureCredential(Human(), "diag_t");
  ASSERT_TRUE(ensured.ok());
  const std::string key = nyxid_.MintedKeys().at(0);
  nyxid_.OnCodexExecute([](const http::Request&) { return FakeNyxid::Reply(401, json::object()); });
  auto failed = codex_->Execute(kUser, Args(), "k", "diag_t");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(ensured->dump().find(key), std::string::npos);
  EXPECT_EQ(codex_->CredentialStatus(kUser).dump().find(key), std::string::npos);
  EXPECT_EQ(std::string(failed.status().message()).find(key), std::string::npos);
  // The vault holds it sealed: the plaintext is in no file of the state.
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(ReadFile(entry.path()).find(key), std::string::npos) << entry.path();
  }
  // Logs hold neither the key nor a route id.
  EXPECT_EQ(ReadFile(log_path_).find(kChronoRouteId), std::string::npos);
  EXPECT_EQ(ReadFile(log_path_).find(kLlmRouteId), std::string::npos);
  // And it still opens: the sealed copy is the one NyxID minted.
  auto held = vault_->Load(kUser);
  ASSERT_TRUE(held.ok() && held->has_value());
  EXPECT_EQ((*held)->secret, key);
  const std::string log = ReadFile(log_path_);
  EXPECT_NE(log.find("codex_exec.managed_failed"), std::string::npos);
  EXPECT_NE(log.find("managed_proxy_authorization_denied"), std::string::npos);
}

TEST_F(ManagedCodexTest, ASealedRowOfAnotherUserDoesNotOpen) {
  ManagedCredential credential{"ak_1", kChronoRouteId, "nyxid_ag_planted", 1, 1};
  ASSERT_TRUE(vault_->Store("other-user", credential).ok());
  auto held = vault_->Load("other-user");
  ASSERT_TRUE(held.ok() && held->has_value());
  EXPECT_EQ((*held)->secret, "nyxid_ag_planted");
  EXPECT_FALSE(vault_->Load(kUser)->has_value());
}

TEST(ManagedDeadlines, KeepTheChainAndGrowWithALongerRun) {
  ManagedDeadlines deadlines;
  EXPECT_EQ(deadlines.ForRun(180), std::chrono::seconds(300));
  EXPECT_EQ(deadlines.ForRun(1), std::chrono::seconds(300));
  EXPECT_EQ(deadlines.ForRun(600), std::chrono::seconds(720));
  EXPECT_LT(deadlines.request, deadlines.client);
}

}  // namespace
}  // namespace aevatar::orchestrator
