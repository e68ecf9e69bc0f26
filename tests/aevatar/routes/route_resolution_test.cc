// The fail-closed code_execute route selection, one case per typed outcome.
#include "aevatar/routes/route_resolution.h"

#include "aevatar/routes/route_test_facts.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using route_test::Alice;
using route_test::kCatalog;

// A compliant, active, personal chrono-sandbox route owned by alice.
RouteFacts Compliant(const std::string& id = "us_alice") {
  RouteFacts route;
  route.id = id;
  route.slug = "chrono-sandbox";
  route.label = id;
  route.catalog_service_id = kCatalog;
  route.owner_type = "user";
  route.owner_id = "u_alice";
  route.active = true;
  route.forward_access_token = true;
  route.inject_delegation_token = true;
  route.scopes = {"proxy:*", "sandbox:execute"};
  return route;
}

RouteFacts OrgRoute(const std::string& org, bool allowed) {
  RouteFacts route = Compliant("us_org");
  route.owner_type = "org";
  route.owner_id = org;
  route.credential_source_allowed = allowed;
  return route;
}

void ExpectCounts(const CandidateCounts& counts, int canonical, int accessible, int active,
                  int eligible) {
  EXPECT_EQ(counts.canonical, canonical);
  EXPECT_EQ(counts.accessible, accessible);
  EXPECT_EQ(counts.active, active);
  EXPECT_EQ(counts.eligible, eligible);
}

TEST(ResolveCodeExecutionRoute, OneCompliantPersonalRouteIsReady) {
  auto result = ResolveCodeExecutionRoute({Compliant()}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kReady);
  ASSERT_TRUE(result.route.has_value());
  EXPECT_EQ(result.route->id, "us_alice");
  EXPECT_EQ(ResolutionCode(result.outcome), "READY");
  EXPECT_TRUE(result.remediation.empty());
  ExpectCounts(result.counts, 1, 1, 1, 1);
}

TEST(ResolveCodeExecutionRoute, EmptyInventoryIsMissing) {
  auto result = ResolveCodeExecutionRoute({}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kMissing);
  EXPECT_EQ(ResolutionCode(result.outcome), "CODE_EXECUTION_ROUTE_MISSING");
  EXPECT_FALSE(result.route.has_value());
  EXPECT_FALSE(result.remediation.empty());
  ExpectCounts(result.counts, 0, 0, 0, 0);
}

TEST(ResolveCodeExecutionRoute, SameSlugCustomServiceNeverShadowsTheCatalogRoute) {
  RouteFacts custom = Compliant("us_custom");
  custom.catalog_service_id.reset();
  // Alone, the custom service is not a candidate at all.
  auto alone = ResolveCodeExecutionRoute({custom}, Alice(), kCatalog);
  EXPECT_EQ(alone.outcome, ResolutionOutcome::kMissing);
  ExpectCounts(alone.counts, 0, 0, 0, 0);
  // Beside the catalog route, it neither wins nor makes the choice ambiguous.
  auto both = ResolveCodeExecutionRoute({custom, Compliant()}, Alice(), kCatalog);
  EXPECT_EQ(both.outcome, ResolutionOutcome::kReady);
  EXPECT_EQ(both.route->id, "us_alice");
  ExpectCounts(both.counts, 1, 1, 1, 1);
}

TEST(ResolveCodeExecutionRoute, OtherCatalogServiceIsNotCanonical) {
  RouteFacts other = Compliant();
  other.catalog_service_id = "cs_llm";
  EXPECT_EQ(ResolveCodeExecutionRoute({other}, Alice(), kCatalog).outcome,
            ResolutionOutcome::kMissing);
}

TEST(ResolveCodeExecutionRoute, EmptyCatalogIdMatchesNothing) {
  RouteFacts odd = Compliant();
  odd.catalog_service_id = "";
  EXPECT_EQ(ResolveCodeExecutionRoute({odd}, Alice(), "").outcome, ResolutionOutcome::kMissing);
}

TEST(ResolveCodeExecutionRoute, SomeoneElsesPersonalRouteIsAccessDenied) {
  RouteFacts bobs = Compliant("us_bob");
  bobs.owner_id = "u_bob";
  auto result = ResolveCodeExecutionRoute({bobs}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kAccessDenied);
  EXPECT_EQ(ResolutionCode(result.outcome), "CODE_EXECUTION_ROUTE_ACCESS_DENIED");
  ExpectCounts(result.counts, 1, 0, 0, 0);
}

TEST(ResolveCodeExecutionRoute, OrgRouteWithoutCredentialSourceIsAccessDeniedForAMember) {
  auto result = ResolveCodeExecutionRoute({OrgRoute("o_acme", false)},
                                          Alice({{"o_acme", "member"}}), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kAccessDenied);
  ExpectCounts(result.counts, 1, 0, 0, 0);
}

TEST(ResolveCodeExecutionRoute, OrgRouteWithCredentialSourceIsReadyForAnyRole) {
  for (const char* role : {"admin", "member", "viewer"}) {
    auto result =
        ResolveCodeExecutionRoute({OrgRoute("o_acme", true)}, Alice({{"o_acme", role}}), kCatalog);
    EXPECT_EQ(result.outcome, ResolutionOutcome::kReady) << role;
    EXPECT_EQ(result.route->id, "us_org") << role;
  }
}

TEST(ResolveCodeExecutionRoute, OrgRouteOfAnotherOrgIsAccessDenied) {
  auto result = ResolveCodeExecutionRoute({OrgRoute("o_other", true)}, Alice({{"o_acme", "admin"}}),
                                          kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kAccessDenied);
}

TEST(ResolveCodeExecutionRoute, OnlyInactiveAccessibleRoutesIsInactive) {
  RouteFacts off = Compliant();
  off.active = false;
  auto result = ResolveCodeExecutionRoute({off}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kInactive);
  EXPECT_EQ(ResolutionCode(result.outcome), "CODE_EXECUTION_ROUTE_INACTIVE");
  ExpectCounts(result.counts, 1, 1, 0, 0);
}

TEST(ResolveCodeExecutionRoute, PolicyMismatchNamesEachUnsatisfiedPart) {
  RouteFacts bare = Compliant();
  bare.forward_access_token = false;
  bare.scopes = {"proxy:*"};
  auto result = ResolveCodeExecutionRoute({bare}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kPolicyMismatch);
  EXPECT_EQ(ResolutionCode(result.outcome), "CODE_EXECUTION_ROUTE_POLICY_MISMATCH");
  ExpectCounts(result.counts, 1, 1, 1, 0);
  EXPECT_TRUE(result.gaps.forward_access_token);
  EXPECT_FALSE(result.gaps.inject_delegation_token);
  EXPECT_FALSE(result.gaps.proxy_scope);
  EXPECT_TRUE(result.gaps.sandbox_execute_scope);
  EXPECT_EQ(result.gaps.Describe(), "forward_access_token=false, scope lacks sandbox:execute");
  EXPECT_NE(result.remediation.find("scope lacks sandbox:execute"), std::string::npos);
}

TEST(ResolveCodeExecutionRoute, PolicyMismatchOfSeveralCandidatesIsTheUnion) {
  RouteFacts a = Compliant("us_a");
  a.inject_delegation_token = false;
  RouteFacts b = Compliant("us_b");
  b.scopes = {"sandbox:execute"};
  auto result = ResolveCodeExecutionRoute({a, b}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kPolicyMismatch);
  ExpectCounts(result.counts, 2, 2, 2, 0);
  EXPECT_EQ(result.gaps.Describe(), "inject_delegation_token=false, scope lacks proxy:*");
}

TEST(ResolveCodeExecutionRoute, ScopeOrderAndExtraScopesDoNotMatter) {
  RouteFacts route = Compliant();
  route.scopes = {"account:read", "sandbox:execute", "llm:*", "proxy:*", "account:read"};
  auto result = ResolveCodeExecutionRoute({route}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kReady);
  EXPECT_FALSE(GapsOf(route).any());
}

TEST(ResolveCodeExecutionRoute, TwoEligibleRoutesAreAmbiguousNotFirstChoice) {
  auto result = ResolveCodeExecutionRoute({Compliant("us_1"), OrgRoute("o_acme", true)},
                                          Alice({{"o_acme", "viewer"}}), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kAmbiguous);
  EXPECT_EQ(ResolutionCode(result.outcome), "CODE_EXECUTION_ROUTE_AMBIGUOUS");
  EXPECT_FALSE(result.route.has_value());
  ExpectCounts(result.counts, 2, 2, 2, 2);
}

TEST(ResolveCodeExecutionRoute, OneEligibleAmongNonCompliantOnesIsReady) {
  RouteFacts stale = Compliant("us_stale");
  stale.scopes = {"proxy:*"};
  RouteFacts off = Compliant("us_off");
  off.active = false;
  auto result = ResolveCodeExecutionRoute({stale, off, Compliant("us_good")}, Alice(), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kReady);
  EXPECT_EQ(result.route->id, "us_good");
  ExpectCounts(result.counts, 3, 3, 2, 1);
}

TEST(ResolveCodeExecutionRoute, CountsFollowEachNarrowingStep) {
  RouteFacts custom = Compliant("us_custom");
  custom.catalog_service_id.reset();
  RouteFacts bobs = Compliant("us_bob");
  bobs.owner_id = "u_bob";
  RouteFacts off = Compliant("us_off");
  off.active = false;
  RouteFacts stale = Compliant("us_stale");
  stale.forward_access_token = false;
  auto result = ResolveCodeExecutionRoute({custom, bobs, OrgRoute("o_acme", false), off, stale},
                                          Alice({{"o_acme", "admin"}}), kCatalog);
  EXPECT_EQ(result.outcome, ResolutionOutcome::kPolicyMismatch);
  ExpectCounts(result.counts, 4, 2, 1, 0);
  EXPECT_EQ(result.gaps.Describe(), "forward_access_token=false");
}

TEST(PolicyGaps, DescribeNamesAllFourPartsInOrder) {
  RouteFacts nothing;
  const PolicyGaps gaps = GapsOf(nothing);
  EXPECT_TRUE(gaps.any());
  EXPECT_EQ(gaps.Describe(),
            "forward_access_token=false, inject_delegation_token=false, scope lacks proxy:*, "
            "scope lacks sandbox:execute");
  EXPECT_EQ(PolicyGaps{}.Describe(), "");
  EXPECT_FALSE(PolicyGaps{}.any());
}

}  // namespace
}  // namespace aevatar::orchestrator
