// The route access rules, cell by cell, and which credentials may do what.
#include "nyxid/routes/route_access.h"

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::nyxid {
namespace {

Principal Caller(const std::string& id, std::vector<std::pair<std::string, OrgRole>> orgs = {},
                 CredentialKind kind = CredentialKind::kAccess) {
  Principal caller;
  caller.user.id = id;
  caller.kind = kind;
  for (auto& [org, role] : orgs) caller.memberships.push_back({org, id, role});
  return caller;
}

UserService Personal(const std::string& owner) {
  UserService route;
  route.id = "us_personal";
  route.slug = "chrono-sandbox";
  route.owner = {OwnerKind::kUser, owner};
  return route;
}

UserService OrgRoute(const std::string& org, bool allowed) {
  UserService route;
  route.id = allowed ? "us_org_allowed" : "us_org_denied";
  route.slug = "chrono-sandbox";
  route.owner = {OwnerKind::kOrg, org};
  route.credential_source_allowed = allowed;
  return route;
}

std::string Code(const absl::Status& status) { return status.ok() ? "OK" : base::ApiCode(status); }

struct Cell {
  const char* who;
  Principal caller;
  UserService route;
  bool see;
  std::string use;
  std::string write;
};

TEST(RouteAccess, MatrixOfCallersAndActions) {
  const std::vector<Cell> cells = {
      {"personal owner", Caller("pat"), Personal("pat"), true, "OK", "OK"},
      {"org admin", Caller("ada", {{"acme", OrgRole::kAdmin}}), OrgRoute("acme", true), true, "OK",
       "OK"},
      {"org admin, allowed=false", Caller("ada", {{"acme", OrgRole::kAdmin}}),
       OrgRoute("acme", false), true, "ROUTE_USE_DENIED", "OK"},
      {"org member, allowed=true", Caller("mia", {{"acme", OrgRole::kMember}}),
       OrgRoute("acme", true), true, "OK", "USER_SERVICE_WRITE_FORBIDDEN"},
      {"org member, allowed=false", Caller("mia", {{"acme", OrgRole::kMember}}),
       OrgRoute("acme", false), true, "ROUTE_USE_DENIED", "USER_SERVICE_WRITE_FORBIDDEN"},
      {"org viewer", Caller("vic", {{"acme", OrgRole::kViewer}}), OrgRoute("acme", true), true,
       "OK", "USER_SERVICE_WRITE_FORBIDDEN"},
      {"stranger, personal", Caller("sam"), Personal("pat"), false, "USER_SERVICE_NOT_FOUND",
       "USER_SERVICE_NOT_FOUND"},
      {"stranger, org", Caller("sam", {{"other", OrgRole::kAdmin}}), OrgRoute("acme", true), false,
       "USER_SERVICE_NOT_FOUND", "USER_SERVICE_NOT_FOUND"},
  };
  for (const Cell& cell : cells) {
    SCOPED_TRACE(cell.who);
    EXPECT_EQ(CanSee(cell.caller, cell.route), cell.see);
    EXPECT_EQ(Code(CheckUsable(cell.caller, cell.route)), cell.use);
    EXPECT_EQ(Code(CheckWritable(cell.caller, cell.route)), cell.write);
  }
}

TEST(RouteAccess, AutoConnectedRoutesAreNeverWritable) {
  UserService route = Personal("pat");
  route.auto_connected = true;
  EXPECT_EQ(Code(CheckWritable(Caller("pat"), route)), "USER_SERVICE_AUTO_CONNECTED");
  EXPECT_EQ(base::HttpStatusFor(CheckWritable(Caller("pat"), route)), 403);
  EXPECT_EQ(Code(CheckUsable(Caller("pat"), route)), "OK");
  // Still invisible to strangers: 404, not 403.
  EXPECT_EQ(Code(CheckWritable(Caller("sam"), route)), "USER_SERVICE_NOT_FOUND");
}

TEST(RouteAccess, CredentialKindsOnTheProxy) {
  UserService route = Personal("pat");
  route.policy.inject_delegation_token = true;

  EXPECT_EQ(Code(CheckCredentialAllowed(Caller("pat"), route)), "OK");

  Principal agent = Caller("pat", {}, CredentialKind::kAgentKey);
  agent.agent_key = AgentKeyRecord{};
  EXPECT_EQ(Code(CheckCredentialAllowed(agent, route)), "OK");
  agent.agent_key->allowed_services = {"us_elsewhere"};
  EXPECT_EQ(Code(CheckCredentialAllowed(agent, route)), "AGENT_KEY_SERVICE_NOT_ALLOWED");

  Principal delegation = Caller("pat", {}, CredentialKind::kDelegation);
  delegation.scopes = {"proxy:*", "sandbox:execute"};
  EXPECT_EQ(Code(CheckCredentialAllowed(delegation, route)), "DELEGATION_CANNOT_MINT");
  route.policy.inject_delegation_token = false;
  EXPECT_EQ(Code(CheckCredentialAllowed(delegation, route)), "OK");
  delegation.scopes = {"sandbox:execute"};
  EXPECT_EQ(Code(CheckCredentialAllowed(delegation, route)), "TOKEN_SCOPE_MISSING");
}

TEST(RouteAccess, OnlyHumanTokensChangeThingsAndDelegationNeedsAccountRead) {
  EXPECT_EQ(Code(RequireHumanToken(Caller("pat"))), "OK");
  EXPECT_EQ(Code(RequireHumanToken(Caller("pat", {}, CredentialKind::kAgentKey))),
            "HUMAN_TOKEN_REQUIRED");
  EXPECT_EQ(Code(RequireHumanToken(Caller("pat", {}, CredentialKind::kDelegation))),
            "HUMAN_TOKEN_REQUIRED");
  Principal delegation = Caller("pat", {}, CredentialKind::kDelegation);
  EXPECT_EQ(Code(RequireAccountRead(delegation)), "TOKEN_SCOPE_MISSING");
  delegation.scopes = {"account:read"};
  EXPECT_EQ(Code(RequireAccountRead(delegation)), "OK");
  EXPECT_EQ(Code(RequireAccountRead(Caller("pat", {}, CredentialKind::kAgentKey))), "OK");
}

}  // namespace
}  // namespace aevatar::nyxid
