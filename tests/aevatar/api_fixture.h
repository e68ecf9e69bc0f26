#ifndef AEVATAR_TESTS_AEVATAR_API_FIXTURE_H_
#define AEVATAR_TESTS_AEVATAR_API_FIXTURE_H_

#include <memory>
#include <string>

#include "aevatar/api/http_api.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/codex/managed_codex.h"
#include "base/crypto.h"
#include "base/login_throttle.h"
#include "codex/fake_nyxid.h"
#include "gtest/gtest.h"
#include "test_signer.h"

namespace aevatar::orchestrator {

// aevatar's real router and ingress auth in this process, in front of the
// NyxID stand-in (codex/fake_nyxid.h): callers present human access tokens
// signed by the test's key. Managed codex_exec is on for everyone; the
// approval store is in memory; /ui logins are throttled per client (5).
class AevatarApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nyxid_.ok());
    client_ = std::make_unique<NyxidClient>(nyxid_.url(), "");
    auth_ = std::make_unique<IngressAuth>(client_.get(), signer_.lookup(), "aevatar");
    auto vault = OpenSqliteCredentialVault(":memory:",
                                           std::make_shared<VaultKeyring>(base::RandomBytes(32)));
    ASSERT_TRUE(vault.ok());
    vault_ = std::move(*vault);
    auto approvals =
        OpenSqliteApprovalStore(":memory:", std::make_shared<VaultKeyring>(base::RandomBytes(32)));
    ASSERT_TRUE(approvals.ok());
    approvals_ = std::move(*approvals);
    ManagedCodexConfig config;
    config.policy.mode = EligibilityMode::kAll;
    codex_ = std::make_unique<ManagedCodex>(client_.get(), vault_.get(), config, base::NowUnixMs);
    HttpApiDeps deps{client_.get(), auth_.get(), "chrono-sandbox"};
    deps.codex = codex_.get();
    deps.approvals = approvals_.get();
    // A fixed clock: a lock lasts for the whole test, however slowly it runs.
    ui_login_throttle_ = std::make_unique<base::LoginThrottle>(
        UiLoginThrottleOptions(), [] { return int64_t{1'800'000'000'000}; });
    deps.ui_login_throttle = ui_login_throttle_.get();
    router_ = BuildHttpApi(deps);
  }

  // A human access token of `subject` (the fake NyxID accepts any signed
  // access token; aevatar's ingress verifies this JWS).
  std::string HumanToken(const std::string& subject = testing::kUser) const {
    return signer_.Sign(TestSigner::AccessClaims(subject));
  }

  http::Response Call(const std::string& method, const std::string& path,
                      const std::string& body = "", const std::string& subject = testing::kUser) {
    http::Request request;
    request.method = method;
    request.path = path;
    request.target = path;
    request.body = body;
    request.headers.Set("Authorization", "Bearer " + HumanToken(subject));
    return router_->Handle(request);
  }

  testing::FakeNyxid nyxid_;
  std::unique_ptr<NyxidClient> client_;
  TestSigner signer_;
  std::unique_ptr<IngressAuth> auth_;
  std::unique_ptr<ManagedCredentialVault> vault_;
  std::unique_ptr<ApprovalStore> approvals_;
  std::unique_ptr<base::LoginThrottle> ui_login_throttle_;
  std::unique_ptr<ManagedCodex> codex_;
  std::unique_ptr<http::Router> router_;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_TESTS_AEVATAR_API_FIXTURE_H_
