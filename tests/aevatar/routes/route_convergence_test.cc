// Bounded code_execute route convergence against a scripted NyxID.
#include "aevatar/routes/route_convergence.h"

#include <algorithm>
#include <deque>
#include <functional>

#include "absl/status/status.h"
#include "aevatar/routes/route_resolution.h"
#include "aevatar/routes/route_test_facts.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using route_test::Alice;
using route_test::kCatalog;

// ScriptedNyxid is a test double of NyxID's route endpoints as one caller sees
// them. Reads serve `inventory`; writes answer with the scripted status and,
// when it is 2xx, change `inventory` the way NyxID does (scopes stored as a
// sorted set, so verification cannot depend on order). `after_write` stands in
// for a concurrent writer and runs after every write. Every write is recorded.
class ScriptedNyxid : public RouteWriter {
 public:
  struct Write {
    std::string method, id;
    nlohmann::json body;
  };

  std::vector<RouteFacts> inventory;
  int put_status = 200;
  int post_status = 201;
  bool fail_first_read = false;  // the pre-convergence read fails (transport)
  bool fail_readback = false;    // every read after a write fails (transport)
  std::function<void(std::vector<RouteFacts>&)> after_write;
  std::vector<Write> writes;
  int reads = 0;

  absl::StatusOr<std::vector<RouteFacts>> ReadInventory() override {
    ++reads;
    if (fail_first_read && reads == 1) return absl::UnavailableError("connection refused");
    if (fail_readback && !writes.empty()) return absl::UnavailableError("timed out");
    return inventory;
  }

  NyxidWriteResult PatchUserService(const std::string& id, const nlohmann::json& patch) override {
    writes.push_back({"PUT", id, patch});
    if (put_status / 100 == 2) {
      for (RouteFacts& route : inventory) {
        if (route.id != id) continue;
        route.forward_access_token =
            patch.value("forward_access_token", route.forward_access_token);
        route.inject_delegation_token =
            patch.value("inject_delegation_token", route.inject_delegation_token);
        if (patch.contains("delegation_token_scope")) {
          route.scopes = Normalized(patch["delegation_token_scope"].get<std::string>());
        }
      }
    }
    if (after_write) after_write(inventory);
    return {put_status, nlohmann::json::object()};
  }

  NyxidWriteResult CreateUserService(const nlohmann::json& body) override {
    writes.push_back({"POST", "", body});
    nlohmann::json answer = nlohmann::json::object();
    if (post_status / 100 == 2) {
      RouteFacts route;
      route.id = "us_alias_new";
      route.slug = body["slug"].get<std::string>();
      route.label = body["label"].get<std::string>();
      route.catalog_service_id = body["catalog_service_id"].get<std::string>();
      route.owner_type = "user";
      route.owner_id = "u_alice";
      route.active = true;
      route.forward_access_token = body["forward_access_token"].get<bool>();
      route.inject_delegation_token = body["inject_delegation_token"].get<bool>();
      route.scopes = Normalized(body["delegation_token_scope"].get<std::string>());
      if (body.contains("node_id")) route.node_id = body["node_id"].get<std::string>();
      inventory.push_back(route);
      answer = {{"id", route.id}};
    }
    if (after_write) after_write(inventory);
    return {post_status, answer};
  }

 private:
  static std::vector<std::string> Normalized(const std::string& scopes) {
    std::vector<std::string> out = SplitScopes(scopes);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
};

// An active personal chrono-sandbox route of alice that misses the contract
// (no forwarded token, no sandbox:execute) and carries an unrelated scope.
RouteFacts Mismatching(const std::string& id = "us_alice") {
  RouteFacts route;
  route.id = id;
  route.slug = "chrono-sandbox";
  route.label = id;
  route.catalog_service_id = kCatalog;
  route.owner_type = "user";
  route.owner_id = "u_alice";
  route.active = true;
  route.inject_delegation_token = true;
  route.scopes = {"account:read", "proxy:*", "account:read"};
  return route;
}

RouteFacts OrgMismatching(const std::string& org) {
  RouteFacts route = Mismatching("us_org");
  route.owner_type = "org";
  route.owner_id = org;
  route.credential_source_allowed = true;
  return route;
}

RouteFacts Platform(std::optional<std::string> node_id) {
  RouteFacts route = Mismatching("us_platform");
  route.auto_connected = true;
  route.forward_access_token = true;
  route.inject_delegation_token = false;
  route.scopes = {"proxy:*", "llm:read"};
  route.node_id = std::move(node_id);
  return route;
}

ConvergenceResult Converge(ScriptedNyxid& nyxid, CallerFacts caller = Alice(),
                           bool write_authority = true) {
  return ConvergeCodeExecutionRoute(nyxid, caller, write_authority, kCatalog);
}

void ExpectReadyOn(const ScriptedNyxid& nyxid, const std::string& id,
                   CallerFacts caller = Alice()) {
  auto resolved = ResolveCodeExecutionRoute(nyxid.inventory, caller, kCatalog);
  ASSERT_EQ(resolved.outcome, ResolutionOutcome::kReady);
  EXPECT_EQ(resolved.route->id, id);
}

TEST(ConvergeCodeExecutionRoute, PersonalRouteGetsTheMinimalPatchAndVerifies) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Mismatching()};
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kPatched);
  EXPECT_EQ(result.route_id, "us_alice");
  EXPECT_EQ(result.code, "");
  EXPECT_EQ(result.writes, 1);
  ASSERT_EQ(nyxid.writes.size(), 1u);
  EXPECT_EQ(nyxid.writes[0].method, "PUT");
  EXPECT_EQ(nyxid.writes[0].id, "us_alice");
  // Observed unique scopes first, in first-seen order, then the two required.
  EXPECT_EQ(nyxid.writes[0].body,
            nlohmann::json({
                {"forward_access_token", true},
                {"inject_delegation_token", true},
                {"delegation_token_scope", "account:read proxy:* sandbox:execute"},
            }));
  EXPECT_EQ(nyxid.reads, 2);  // the read, and the fresh readback
  ExpectReadyOn(nyxid, "us_alice");
}

TEST(ConvergeCodeExecutionRoute, OrgAdminPatchesTheOrgRoute) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {OrgMismatching("o_acme")};
  auto result = Converge(nyxid, Alice({{"o_acme", "admin"}}));
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kPatched);
  EXPECT_EQ(result.route_id, "us_org");
  ASSERT_EQ(nyxid.writes.size(), 1u);
  EXPECT_EQ(nyxid.writes[0].id, "us_org");
  ExpectReadyOn(nyxid, "us_org", Alice({{"o_acme", "admin"}}));
}

TEST(ConvergeCodeExecutionRoute, OrgMemberOrViewerIsBlockedWithoutWriting) {
  for (const char* role : {"member", "viewer"}) {
    ScriptedNyxid nyxid;
    nyxid.inventory = {OrgMismatching("o_acme")};
    auto result = Converge(nyxid, Alice({{"o_acme", role}}));
    EXPECT_EQ(result.outcome, ConvergenceOutcome::kBlockedWriteAuthority) << role;
    EXPECT_EQ(result.code, "CODE_EXECUTION_ROUTE_WRITE_AUTHORITY_REQUIRED");
    EXPECT_FALSE(result.remediation.empty());
    EXPECT_FALSE(result.route_id.has_value());
    EXPECT_EQ(result.writes, 0);
    EXPECT_TRUE(nyxid.writes.empty()) << role;
  }
}

TEST(ConvergeCodeExecutionRoute, AgentKeyAndDelegationCallersNeverWriteOrRead) {
  // Agent Keys and proxy delegation tokens carry no write authority.
  ScriptedNyxid nyxid;
  nyxid.inventory = {Mismatching(), Platform("node_7")};
  auto result = Converge(nyxid, Alice(), /*write_authority=*/false);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kNoWriteAuthority);
  EXPECT_EQ(result.writes, 0);
  EXPECT_TRUE(nyxid.writes.empty());
  EXPECT_EQ(nyxid.reads, 0);
}

TEST(ConvergeCodeExecutionRoute, CompliantRouteIsLeftUntouched) {
  RouteFacts route = Mismatching();
  route.forward_access_token = true;
  route.scopes = {"sandbox:execute", "llm:read", "proxy:*"};
  ScriptedNyxid nyxid;
  nyxid.inventory = {route};
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kNotNeeded);
  EXPECT_EQ(result.route_id, "us_alice");
  EXPECT_EQ(result.writes, 0);
  EXPECT_TRUE(nyxid.writes.empty());
}

TEST(ConvergeCodeExecutionRoute, AutoConnectedRouteGetsAPersonalAliasWithItsNode) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform("node_7")};
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kAliasCreated);
  EXPECT_EQ(result.route_id, "us_alias_new");
  ASSERT_EQ(nyxid.writes.size(), 1u);  // the platform route itself is never PUT
  EXPECT_EQ(nyxid.writes[0].method, "POST");
  EXPECT_EQ(nyxid.writes[0].body,
            nlohmann::json({
                {"slug", kAliasSlug},
                {"label", kAliasLabel},
                {"catalog_service_id", kCatalog},
                {"forward_access_token", true},
                {"inject_delegation_token", true},
                {"delegation_token_scope", "proxy:* sandbox:execute llm:read"},
                {"node_id", "node_7"},
            }));
  ExpectReadyOn(nyxid, "us_alias_new");
}

TEST(ConvergeCodeExecutionRoute, AliasOmitsNodeWhenThePlatformRouteHasNone) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform(std::nullopt)};
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kAliasCreated);
  ASSERT_EQ(nyxid.writes.size(), 1u);
  EXPECT_FALSE(nyxid.writes[0].body.contains("node_id"));
}

TEST(ConvergeCodeExecutionRoute, ConcurrentAliasCreateConflictRereadsAndUsesIt) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform("node_7")};
  nyxid.post_status = 409;
  nyxid.after_write = [](std::vector<RouteFacts>& inventory) {
    RouteFacts raced = Mismatching("us_alias_other");
    raced.slug = kAliasSlug;
    raced.forward_access_token = true;
    raced.scopes = {"proxy:*", "sandbox:execute"};
    inventory.push_back(raced);
  };
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kAliasRaced);
  EXPECT_EQ(result.route_id, "us_alias_other");
  EXPECT_EQ(result.code, "");
  EXPECT_EQ(nyxid.reads, 2);
}

TEST(ConvergeCodeExecutionRoute, AliasConflictWithoutACompliantAliasIsUnverified) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform("node_7")};
  nyxid.post_status = 409;
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairUnverified);
  EXPECT_EQ(result.code, "CODE_EXECUTION_ROUTE_REPAIR_UNVERIFIED");
}

TEST(ConvergeCodeExecutionRoute, DefinitiveClientRejectionIsRepairRejected) {
  for (int status : {400, 403, 404}) {
    ScriptedNyxid nyxid;
    nyxid.inventory = {Mismatching()};
    nyxid.put_status = status;
    auto result = Converge(nyxid);
    EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairRejected) << status;
    EXPECT_EQ(result.code, "CODE_EXECUTION_ROUTE_REPAIR_REJECTED") << status;
    EXPECT_NE(result.remediation.find("owner"), std::string::npos);
    EXPECT_FALSE(result.route_id.has_value());
    EXPECT_EQ(result.writes, 1);
  }
}

TEST(ConvergeCodeExecutionRoute, RejectedAliasCreateIsRepairRejected) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform("node_7")};
  nyxid.post_status = 403;
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairRejected);
  EXPECT_EQ(result.code, "CODE_EXECUTION_ROUTE_REPAIR_REJECTED");
}

TEST(ConvergeCodeExecutionRoute, TransportTimeoutRateLimitAnd5xxAreRepairUnverified) {
  for (int status : {0, 408, 429, 500, 503}) {
    for (bool alias : {false, true}) {
      ScriptedNyxid nyxid;
      nyxid.inventory = {alias ? Platform("node_7") : Mismatching()};
      nyxid.put_status = status;
      nyxid.post_status = status;
      auto result = Converge(nyxid);
      EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairUnverified) << status << alias;
      EXPECT_EQ(result.code, "CODE_EXECUTION_ROUTE_REPAIR_UNVERIFIED");
      EXPECT_NE(result.remediation.find("Retry"), std::string::npos);
      EXPECT_EQ(result.writes, 1);
    }
  }
}

TEST(ConvergeCodeExecutionRoute, ReadbackDriftIsRepairUnverified) {
  const std::vector<std::function<void(std::vector<RouteFacts>&)>> drifts = {
      // A concurrent edit dropped a preserved scope.
      [](std::vector<RouteFacts>& inv) {
        inv[0].scopes = {"proxy:*", "sandbox:execute"};
      },
      // ...or turned the policy off again.
      [](std::vector<RouteFacts>& inv) { inv[0].forward_access_token = false; },
      // The catalog identity changed.
      [](std::vector<RouteFacts>& inv) { inv[0].catalog_service_id = "cs_other"; },
      // The route is gone.
      [](std::vector<RouteFacts>& inv) { inv.clear(); },
  };
  for (size_t i = 0; i < drifts.size(); ++i) {
    ScriptedNyxid nyxid;
    nyxid.inventory = {Mismatching()};
    nyxid.after_write = drifts[i];
    auto result = Converge(nyxid);
    EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairUnverified) << i;
    EXPECT_FALSE(result.route_id.has_value()) << i;
  }
}

TEST(ConvergeCodeExecutionRoute, AliasReadbackWithoutTheNodeBindingIsUnverified) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Platform("node_7")};
  nyxid.after_write = [](std::vector<RouteFacts>& inv) { inv.back().node_id.reset(); };
  EXPECT_EQ(Converge(nyxid).outcome, ConvergenceOutcome::kRepairUnverified);
}

TEST(ConvergeCodeExecutionRoute, FailedReadbackIsRepairUnverified) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Mismatching()};
  nyxid.fail_readback = true;
  EXPECT_EQ(Converge(nyxid).outcome, ConvergenceOutcome::kRepairUnverified);
}

TEST(ConvergeCodeExecutionRoute, FailedFirstReadWritesNothing) {
  ScriptedNyxid nyxid;
  nyxid.inventory = {Mismatching()};
  nyxid.fail_first_read = true;
  auto result = Converge(nyxid);
  EXPECT_EQ(result.outcome, ConvergenceOutcome::kRepairUnverified);
  EXPECT_EQ(result.writes, 0);
  EXPECT_TRUE(nyxid.writes.empty());
}

TEST(ConvergeCodeExecutionRoute, NonPolicyBlockersAndSeveralCandidatesAreNotApplicable) {
  RouteFacts inactive = Mismatching();
  inactive.active = false;
  RouteFacts bobs = Mismatching("us_bob");
  bobs.owner_id = "u_bob";
  const std::vector<std::vector<RouteFacts>> inventories = {
      {},                                               // missing
      {inactive},                                       // inactive
      {bobs},                                           // access denied
      {Mismatching("us_1"), Mismatching("us_2")},       // two mismatching candidates
      {Mismatching("us_1"), OrgMismatching("o_acme")},  // one writable, but not the only one
  };
  for (size_t i = 0; i < inventories.size(); ++i) {
    ScriptedNyxid nyxid;
    nyxid.inventory = inventories[i];
    auto result = Converge(nyxid, Alice({{"o_acme", "admin"}}));
    EXPECT_EQ(result.outcome, ConvergenceOutcome::kNotApplicable) << i;
    EXPECT_TRUE(nyxid.writes.empty()) << i;
  }
}

TEST(MinimalPolicyPatch, KeepsUniqueScopesAndAddsOnlyWhatIsMissing) {
  RouteFacts route = Mismatching();
  route.scopes = {"sandbox:execute", "b", "sandbox:execute", "a", "b"};
  EXPECT_EQ(MinimalPolicyPatch(route)["delegation_token_scope"], "sandbox:execute b a proxy:*");
}

}  // namespace
}  // namespace aevatar::orchestrator
