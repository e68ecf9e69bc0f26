#include "aevatar/admission/agent_key_scope.h"

#include <string>
#include <vector>

#include "base/api_error.h"
#include "gtest/gtest.h"

// Which callers a route's CallerScope admits, and the route match a
// restricted key needs where aevatar checks it itself (managed codex_exec).
namespace aevatar::orchestrator {
namespace {

Caller Key(std::vector<std::string> allowed) {
  return {CredentialKind::kAgentKey, "u_1", "nyxid_ag_x", false, std::move(allowed)};
}

TEST(AgentKeyScope, OnlyARestrictedKeyIsRefusedAndOnlyOnAccountRoutes) {
  const Caller restricted = Key({"us_other"});
  const absl::Status refused = CheckCallerScope(restricted, CallerScope::kAccount);
  EXPECT_EQ(base::ApiCode(refused), "AGENT_KEY_RESTRICTED");
  EXPECT_EQ(base::HttpStatusFor(refused), 403);
  EXPECT_TRUE(CheckCallerScope(restricted, CallerScope::kExecution).ok());
  for (const Caller& caller : {Key({}), Caller{CredentialKind::kHumanBearer, "u_1", "jws", true},
                               Caller{CredentialKind::kProxyDelegation, "u_1", "jws", false}}) {
    EXPECT_TRUE(CheckCallerScope(caller, CallerScope::kAccount).ok())
        << CredentialKindName(caller.kind);
  }
  // Only an Agent Key can be restricted: a token never is, whatever it holds.
  Caller token{CredentialKind::kHumanBearer, "u_1", "jws", true, {"us_other"}};
  EXPECT_TRUE(CheckCallerScope(token, CallerScope::kAccount).ok());
}

TEST(AgentKeyScope, AllowedServicesMatchTheRouteByIdOrSlugAsNyxidDoes) {
  EXPECT_TRUE(AllowedServicesNameRoute({}, "us_1", "chrono-sandbox"));
  EXPECT_TRUE(AllowedServicesNameRoute({"x", "us_1"}, "us_1", "chrono-sandbox"));
  EXPECT_TRUE(AllowedServicesNameRoute({"chrono-sandbox"}, "us_1", "chrono-sandbox"));
  EXPECT_FALSE(AllowedServicesNameRoute({"some-other-service"}, "us_1", "chrono-sandbox"));
  // An unknown slug (the route missing from the inventory) matches nothing.
  EXPECT_FALSE(AllowedServicesNameRoute({""}, "us_1", ""));
  EXPECT_FALSE(AllowedServicesNameRoute({"US_1", "chrono"}, "us_1", "chrono-sandbox"));
  const absl::Status refused = CheckAgentKeyAllowsRoute({"elsewhere"}, "us_1", "chrono-sandbox");
  EXPECT_EQ(base::ApiCode(refused), "AGENT_KEY_SERVICE_NOT_ALLOWED");
  EXPECT_EQ(base::HttpStatusFor(refused), 403);
  EXPECT_EQ(std::string(refused.message()).find("us_1"), std::string::npos) << "names the route";
  EXPECT_TRUE(CheckAgentKeyAllowsRoute({"us_1"}, "us_1", "").ok());
}

}  // namespace
}  // namespace aevatar::orchestrator
