// The actor-owned authorization catalog: built from NyxID facts, revoked by
// later facts, never derived from the proof it is checked against.
#include "aevatar/runtime/authorization_catalog.h"

#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

const AdmittedRoute kRoute{"us_1", "chrono-sandbox", "chrono-sandbox"};

RouteFacts Compliant() {
  RouteFacts route;
  route.id = "us_1";
  route.slug = "chrono-sandbox";
  route.catalog_service_id = "chrono-sandbox";
  route.owner_type = "user";
  route.owner_id = "alice";
  route.active = true;
  route.forward_access_token = true;
  route.inject_delegation_token = true;
  route.scopes = {"proxy:*", "sandbox:execute"};
  return route;
}

NyxidFacts FactsWith(const RouteFacts& route) {
  NyxidFacts facts;
  facts.caller.user_id = "alice";
  facts.inventory = {route};
  return facts;
}

TEST(AuthorizationCatalog, IsBuiltOnlyFromFactsThatGrantTheRoute) {
  auto catalog = CatalogFromFacts(FactsWith(Compliant()), kRoute, kNow);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(CheckGrant(*catalog, kRoute), "");
  // Another route, or the same id under another catalog identity, is not granted.
  EXPECT_EQ(CheckGrant(*catalog, {"us_2", "chrono-sandbox", "chrono-sandbox"}), kGrantMissingCode);
  EXPECT_EQ(CheckGrant(*catalog, {"us_1", "chrono-sandbox", "other"}), kGrantMissingCode);
  RouteFacts inactive = Compliant();
  inactive.active = false;
  auto refused = CatalogFromFacts(FactsWith(inactive), kRoute, kNow);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("CODE_EXECUTION_ROUTE_INACTIVE"), std::string::npos);
  EXPECT_EQ(CheckGrant(nlohmann::json(nullptr), kRoute), kGrantMissingCode);
  EXPECT_EQ(CheckGrant(nlohmann::json::array(), kRoute), kGrantMissingCode);
}

TEST(AuthorizationCatalog, EachNyxidFactRevokesWithTheSpecsCategory) {
  RouteFacts gone = Compliant();
  gone.id = "us_other";
  RouteFacts recatalogued = Compliant();
  recatalogued.catalog_service_id = "custom";
  RouteFacts foreign = Compliant();
  foreign.owner_id = "mallory";
  RouteFacts org_denied = Compliant();
  org_denied.owner_type = "org";
  org_denied.owner_id = "acme";
  org_denied.credential_source_allowed = false;
  RouteFacts inactive = Compliant();
  inactive.active = false;
  RouteFacts contract = Compliant();
  contract.scopes = {"proxy:*"};
  struct Case {
    RouteFacts route;
    const char* code;
  };
  for (const Case& c : {Case{gone, "code_execution_route_missing"},
                        Case{recatalogued, "code_execution_route_missing"},
                        Case{foreign, "code_execution_route_access_denied"},
                        Case{org_denied, "code_execution_route_access_denied"},
                        Case{inactive, "code_execution_route_inactive"},
                        Case{contract, "code_execution_route_policy_mismatch"}}) {
    nlohmann::json catalog = *CatalogFromFacts(FactsWith(Compliant()), kRoute, kNow);
    NyxidFacts later = FactsWith(c.route);
    later.caller.org_roles["acme"] = "member";
    EXPECT_EQ(GrantVerdict(later, kRoute), c.code);
    EXPECT_EQ(ApplyFacts(catalog, later, kRevokedByObservedFacts, kNow + 1), 1) << c.code;
    EXPECT_EQ(CheckGrant(catalog, kRoute), c.code);
    EXPECT_EQ(catalog["grants"][0]["revoked"]["source"], kRevokedByObservedFacts);
  }
}

TEST(AuthorizationCatalog, ARevocationIsSticky) {
  nlohmann::json catalog = *CatalogFromFacts(FactsWith(Compliant()), kRoute, kNow);
  RouteFacts inactive = Compliant();
  inactive.active = false;
  ASSERT_EQ(ApplyFacts(catalog, FactsWith(inactive), kRevokedByRuntimeReread, kNow), 1);
  // The route comes back: the run does not regain the grant.
  EXPECT_EQ(ApplyFacts(catalog, FactsWith(Compliant()), kRevokedByObservedFacts, kNow), 0);
  EXPECT_EQ(CheckGrant(catalog, kRoute), "code_execution_route_inactive");
  EXPECT_FALSE(RevokeGrant(catalog, "us_1", "code_execution_route_access_denied",
                           kRevokedByRuntimeReread, kNow));
  EXPECT_EQ(CheckGrant(catalog, kRoute), "code_execution_route_inactive");
}

TEST(AuthorizationCatalog, RevokeGrantNamesTheExactService) {
  nlohmann::json catalog = *CatalogFromFacts(FactsWith(Compliant()), kRoute, kNow);
  EXPECT_FALSE(RevokeGrant(catalog, "us_other", "code_execution_route_access_denied",
                           kRevokedByRuntimeReread, kNow));
  EXPECT_EQ(CheckGrant(catalog, kRoute), "");
  EXPECT_TRUE(RevokeGrant(catalog, "us_1", "code_execution_route_access_denied",
                          kRevokedByRuntimeReread, kNow));
  EXPECT_EQ(CheckGrant(catalog, kRoute), "code_execution_route_access_denied");
}

}  // namespace
}  // namespace aevatar::orchestrator
