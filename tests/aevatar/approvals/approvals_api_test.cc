// The approvals API through aevatar's real router and ingress auth: the
// owner lists, reads and decides an approval once; another user sees none
// of it; responses are never cached.
#include <string>

#include "aevatar/approvals/approval.h"
#include "api_fixture.h"
#include "base/clock.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class ApprovalsApiTest : public AevatarApiTest {
 protected:
  void Plant(const std::string& id, int64_t expires_in_ms) {
    Approval approval;
    approval.id = id;
    approval.owner = testing::kUser;
    approval.tool = "codex_exec";
    approval.call = {
        {"target",
         {{"kind", "private_ssh"}, {"private_ssh", {{"service", "box"}, {"principal", "alice"}}}}},
        {"prompt", "Reply with exactly CODEX_EXEC_READY"},
        {"timeout_secs", 300}};
    approval.call_digest = ApprovalCallDigest(approval.call);
    approval.created_at_ms = base::NowUnixMs();
    approval.expires_at_ms = approval.created_at_ms + expires_in_ms;
    ASSERT_TRUE(approvals_->Create(approval).ok());
  }
};

TEST_F(ApprovalsApiTest, TheOwnerSeesTheExactCallAndDecidesItOnce) {
  Plant("appr_a", 600'000);
  http::Response list = Call("GET", "/api/approvals");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.headers.Get("Cache-Control").value_or(""), "no-store");
  const json listed = json::parse(list.body);
  ASSERT_EQ(listed["approvals"].size(), 1u);
  EXPECT_EQ(listed["approvals"][0]["state"], "pending");
  EXPECT_EQ(listed["approvals"][0]["call"]["target"]["private_ssh"]["principal"], "alice");
  EXPECT_EQ(listed["approvals"][0]["call_digest"],
            ApprovalCallDigest(listed["approvals"][0]["call"]));

  http::Response approved = Call("POST", "/api/approvals/appr_a/approve");
  ASSERT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(json::parse(approved.body)["state"], "approved");
  http::Response again = Call("POST", "/api/approvals/appr_a/deny");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(json::parse(again.body)["code"], "APPROVAL_ALREADY_DECIDED");
  EXPECT_EQ(json::parse(Call("GET", "/api/approvals/appr_a").body)["state"], "approved");
}

TEST_F(ApprovalsApiTest, DenyAndExpiryAreTyped) {
  Plant("appr_d", 600'000);
  http::Response denied = Call("POST", "/api/approvals/appr_d/deny");
  ASSERT_EQ(denied.status, 200) << denied.body;
  EXPECT_EQ(json::parse(denied.body)["state"], "denied");

  Plant("appr_e", -1);
  EXPECT_EQ(json::parse(Call("GET", "/api/approvals/appr_e").body)["state"], "expired");
  http::Response late = Call("POST", "/api/approvals/appr_e/approve");
  EXPECT_EQ(late.status, 410);
  const json problem = json::parse(late.body);
  EXPECT_EQ(problem["code"], "APPROVAL_EXPIRED");
  EXPECT_FALSE(problem.value("diagnostic_id", "").empty());
}

TEST_F(ApprovalsApiTest, AnotherUserCanNeitherSeeNorDecideIt) {
  Plant("appr_a", 600'000);
  EXPECT_TRUE(json::parse(Call("GET", "/api/approvals", "", "user-2").body)["approvals"].empty());
  for (const auto& [method, path] : {std::pair{"GET", "/api/approvals/appr_a"},
                                     std::pair{"POST", "/api/approvals/appr_a/approve"},
                                     std::pair{"POST", "/api/approvals/appr_a/deny"}}) {
    http::Response response = Call(method, path, "", "user-2");
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_EQ(json::parse(response.body)["code"], "APPROVAL_NOT_FOUND");
  }
  EXPECT_EQ(json::parse(Call("GET", "/api/approvals/appr_a").body)["state"], "pending");
}

// The agent that asked holds a delegation token (or an Agent Key): it may
// read and deny, but approving takes the person's own login.
TEST_F(ApprovalsApiTest, AnAgentCannotApproveItsOwnRequest) {
  Plant("appr_a", 600'000);
  nlohmann::json claims = TestSigner::AccessClaims(testing::kUser);
  claims["token_kind"] = "delegation";
  claims["aud"] = "aevatar";
  auto as_agent = [&](const std::string& verb) {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/api/approvals/appr_a/" + verb;
    request.headers.Set("Authorization", "Bearer " + signer_.Sign(claims));
    return router_->Handle(request);
  };
  http::Response approve = as_agent("approve");
  EXPECT_EQ(approve.status, 403) << approve.body;
  EXPECT_EQ(json::parse(approve.body)["code"], "APPROVAL_NEEDS_HUMAN");
  EXPECT_EQ(json::parse(Call("GET", "/api/approvals/appr_a").body)["state"], "pending");
  EXPECT_EQ(as_agent("deny").status, 200);
}

TEST_F(ApprovalsApiTest, WithoutATokenNothingIsShown) {
  Plant("appr_a", 600'000);
  http::Request request;
  request.method = "GET";
  request.path = request.target = "/api/approvals";
  http::Response response = router_->Handle(request);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(response.body.find("CODEX_EXEC_READY"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::orchestrator
