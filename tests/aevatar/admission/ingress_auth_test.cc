#include "aevatar/admission/ingress_auth.h"

#include <string>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "clients/canned_server.h"
#include "gtest/gtest.h"
#include "test_signer.h"

// IngressAuth with claims and introspection answers of the wrong type: each
// used to escape as nlohmann::json::type_error out of a request handler.
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kAudience[] = "aevatar";
constexpr char kAgentKey[] = "nyxid_ag_0123456789";

class IngressAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nyxid_.ok());
    client_ = std::make_unique<NyxidClient>(nyxid_.url(), "introspection-secret");
    auth_ = std::make_unique<IngressAuth>(client_.get(), signer_.lookup(), kAudience,
                                          std::chrono::seconds(0));
  }

  static json Claims() { return TestSigner::AccessClaims("u_1"); }

  absl::StatusOr<Caller> WithBearer(const std::string& bearer) {
    http::Request request;
    request.headers.Set("Authorization", "Bearer " + bearer);
    return auth_->Authenticate(request);
  }

  absl::StatusOr<Caller> WithClaims(const json& claims) { return WithBearer(signer_.Sign(claims)); }

  testing::CannedServer nyxid_;
  std::unique_ptr<NyxidClient> client_;
  TestSigner signer_;
  std::unique_ptr<IngressAuth> auth_;
};

TEST_F(IngressAuthTest, AWellFormedAccessTokenIsAHumanBearer) {
  nyxid_.Answer("/api/v1/tokens/introspect", 200,
                R"({"active": true, "kind": "AccessToken", "sub": "u_1"})");
  auto caller = WithClaims(Claims());
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->kind, CredentialKind::kHumanBearer);
  EXPECT_EQ(caller->user_id, "u_1");
}

TEST_F(IngressAuthTest, ASignedTokenNyxidNoLongerStandsByIsRevoked) {
  // Logged out, password changed: NyxID says inactive, or names another
  // subject, or cannot be asked.
  for (const char* answer :
       {R"({"active": false})", R"({"active": true, "kind": "AccessToken", "sub": "u_2"})",
        R"({"active": true, "kind": "AgentKey", "sub": "u_1"})"}) {
    nyxid_.Answer("/api/v1/tokens/introspect", 200, answer);
    EXPECT_EQ(base::ApiCode(WithClaims(Claims()).status()), "TOKEN_REVOKED") << answer;
  }
  nyxid_.Answer("/api/v1/tokens/introspect", 503, "{}");
  EXPECT_EQ(base::ApiCode(WithClaims(Claims()).status()), "NYXID_UNAVAILABLE");
}

TEST_F(IngressAuthTest, SignedClaimsOfTheWrongTypeAreRefusedNotThrown) {
  json kind = Claims();
  kind["token_kind"] = 5;
  EXPECT_EQ(base::ApiCode(WithClaims(kind).status()), "TOKEN_KIND_MISMATCH");
  json subject = Claims();
  subject["sub"] = json::object({{"id", "u_1"}});
  EXPECT_EQ(base::ApiCode(WithClaims(subject).status()), "TOKEN_MALFORMED");
}

TEST_F(IngressAuthTest, AnIntrospectionAnswerOfTheWrongTypeIsResponseInvalid) {
  for (const char* body : {R"({"active": "yes", "kind": "AgentKey", "sub": "u_1"})",
                           R"({"active": true, "kind": 1, "sub": "u_1"})",
                           R"({"active": true, "kind": "AgentKey", "sub": ["u_1"]})",
                           R"({"active": true, "kind": "AgentKey", "sub": "u_1",
                               "allowed_services": "us_1"})",
                           R"({"active": true, "kind": "AgentKey", "sub": "u_1",
                               "allowed_services": ["us_1", 7]})",
                           "[]"}) {
    nyxid_.Answer("/api/v1/tokens/introspect", 200, body);
    auto caller = WithBearer(kAgentKey);
    ASSERT_FALSE(caller.ok()) << body;
    EXPECT_EQ(base::ApiCode(caller.status()), kNyxidResponseInvalidCode) << body;
    EXPECT_EQ(base::HttpStatusFor(caller.status()), 502);
  }
}

TEST_F(IngressAuthTest, IntrospectionStillAdmitsOnlyAnActiveAgentKey) {
  nyxid_.Answer("/api/v1/tokens/introspect", 200, R"({"active": false})");
  EXPECT_EQ(base::ApiCode(WithBearer(kAgentKey).status()), "AGENT_KEY_INACTIVE");
  nyxid_.Answer("/api/v1/tokens/introspect", 200,
                R"({"active": true, "kind": "HumanBearer", "sub": "u_1"})");
  EXPECT_EQ(base::ApiCode(WithBearer(kAgentKey).status()), "AGENT_KEY_INACTIVE");
  nyxid_.Answer("/api/v1/tokens/introspect", 200,
                R"({"active": true, "kind": "AgentKey", "sub": "u_1"})");
  auto caller = WithBearer(kAgentKey);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->kind, CredentialKind::kAgentKey);
  EXPECT_EQ(caller->user_id, "u_1");
  EXPECT_FALSE(caller->RestrictedAgentKey());
}

TEST_F(IngressAuthTest, AnAgentKeysAllowedServicesMakeItARestrictedCaller) {
  nyxid_.Answer("/api/v1/tokens/introspect", 200,
                R"({"active": true, "kind": "AgentKey", "sub": "u_1",
                    "allowed_services": ["us_1", "chrono-sandbox"]})");
  auto caller = WithBearer(kAgentKey);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_TRUE(caller->RestrictedAgentKey());
  EXPECT_EQ(caller->allowed_services, (std::vector<std::string>{"us_1", "chrono-sandbox"}));
  // Empty or null is no restriction.
  for (const char* none : {"[]", "null"}) {
    nyxid_.Answer("/api/v1/tokens/introspect", 200,
                  std::string(R"({"active": true, "kind": "AgentKey", "sub": "u_1",)") +
                      R"("allowed_services": )" + none + "}");
    auto open = WithBearer(kAgentKey);
    ASSERT_TRUE(open.ok()) << open.status();
    EXPECT_FALSE(open->RestrictedAgentKey()) << none;
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
