// Parsing NyxID's /api/v1/keys and /api/v1/me into route and caller facts.
#include "aevatar/routes/route_inventory.h"

#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

// One /keys entry as NyxID serializes it (http_api.cc UserServiceJson).
nlohmann::json KeyEntry() {
  return {{"id", "us_1"},
          {"slug", "chrono-sandbox"},
          {"label", "Chrono Sandbox"},
          {"catalog_service_id", "cs_chrono"},
          {"catalog_slug", "chrono-sandbox"},
          {"owner", {{"type", "user"}, {"id", "u_alice"}}},
          {"active", true},
          {"forward_access_token", true},
          {"inject_delegation_token", true},
          {"delegation_token_scope", "sandbox:execute  proxy:*\tsandbox:execute"},
          {"credential_source", {{"allowed", false}}},
          {"node_id", "node_7"},
          {"created_at_ms", 1},
          {"updated_at_ms", 2},
          {"auto_connected", true},
          {"usable", true}};
}

nlohmann::json Keys(nlohmann::json entry) { return {{"keys", nlohmann::json::array({entry})}}; }

TEST(ParseKeysInventory, ReadsEveryFieldAndIgnoresUnknownOnes) {
  auto routes = ParseKeysInventory(Keys(KeyEntry()));
  ASSERT_TRUE(routes.ok()) << routes.status();
  ASSERT_EQ(routes->size(), 1u);
  const RouteFacts& route = routes->front();
  EXPECT_EQ(route.id, "us_1");
  EXPECT_EQ(route.slug, "chrono-sandbox");
  EXPECT_EQ(route.label, "Chrono Sandbox");
  EXPECT_EQ(route.catalog_service_id, "cs_chrono");
  EXPECT_EQ(route.owner_type, "user");
  EXPECT_EQ(route.owner_id, "u_alice");
  EXPECT_TRUE(route.active);
  EXPECT_TRUE(route.forward_access_token);
  EXPECT_TRUE(route.inject_delegation_token);
  EXPECT_TRUE(route.auto_connected);
  EXPECT_FALSE(route.credential_source_allowed);
  EXPECT_EQ(route.node_id, "node_7");
}

TEST(ParseKeysInventory, ScopesKeepOrderAndDuplicates) {
  auto routes = ParseKeysInventory(Keys(KeyEntry()));
  ASSERT_TRUE(routes.ok());
  EXPECT_EQ(routes->front().scopes,
            (std::vector<std::string>{"sandbox:execute", "proxy:*", "sandbox:execute"}));
}

TEST(ParseKeysInventory, NullOrAbsentCatalogAndNodeReadAsNull) {
  nlohmann::json entry = KeyEntry();
  entry["catalog_service_id"] = nullptr;
  entry.erase("node_id");
  entry["delegation_token_scope"] = "";
  auto routes = ParseKeysInventory(Keys(entry));
  ASSERT_TRUE(routes.ok()) << routes.status();
  EXPECT_FALSE(routes->front().catalog_service_id.has_value());
  EXPECT_FALSE(routes->front().node_id.has_value());
  EXPECT_TRUE(routes->front().scopes.empty());
}

TEST(ParseKeysInventory, EmptyInventoryIsValid) {
  auto routes = ParseKeysInventory({{"keys", nlohmann::json::array()}});
  ASSERT_TRUE(routes.ok());
  EXPECT_TRUE(routes->empty());
}

TEST(ParseKeysInventory, MalformedBodiesAreInvalidArgument) {
  for (const nlohmann::json& body :
       {nlohmann::json::array(), nlohmann::json({{"keys", "x"}}), nlohmann::json::object(),
        nlohmann::json({{"keys", nlohmann::json::array({1})}})}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseKeysInventory(body).status())) << body.dump();
  }
}

TEST(ParseKeysInventory, EachRequiredFieldIsChecked) {
  for (const char* field :
       {"id", "slug", "label", "owner", "active", "forward_access_token", "inject_delegation_token",
        "delegation_token_scope", "credential_source", "auto_connected"}) {
    nlohmann::json entry = KeyEntry();
    entry.erase(field);
    EXPECT_TRUE(absl::IsInvalidArgument(ParseKeysInventory(Keys(entry)).status())) << field;
  }
}

TEST(ParseKeysInventory, WrongTypesAreInvalidArgument) {
  std::vector<std::pair<const char*, nlohmann::json>> cases = {
      {"id", ""},
      {"active", "true"},
      {"catalog_service_id", 5},
      {"node_id", true},
      {"delegation_token_scope", nlohmann::json::array({"proxy:*"})},
      {"owner", {{"type", "team"}, {"id", "t1"}}},
      {"owner", {{"type", "user"}, {"id", ""}}},
      {"credential_source", {{"allowed", "yes"}}},
  };
  for (const auto& [field, value] : cases) {
    nlohmann::json entry = KeyEntry();
    entry[field] = value;
    auto status = ParseKeysInventory(Keys(entry)).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << field << "=" << value.dump();
    EXPECT_NE(std::string(status.message()).find(field), std::string::npos) << status;
  }
}

TEST(ParseCallerFacts, ReadsIdAndOrgRoles) {
  auto caller = ParseCallerFacts(nlohmann::json::parse(R"({
      "id": "u_alice", "username": "alice",
      "orgs": [{"id": "o_1", "slug": "acme", "role": "admin"}, {"id": "o_2", "role": "viewer"}]
  })"));
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->user_id, "u_alice");
  EXPECT_EQ(caller->org_roles,
            (std::map<std::string, std::string>{{"o_1", "admin"}, {"o_2", "viewer"}}));
}

TEST(ParseCallerFacts, AbsentOrgsMeansNoMemberships) {
  auto caller = ParseCallerFacts({{"id", "u_alice"}});
  ASSERT_TRUE(caller.ok());
  EXPECT_TRUE(caller->org_roles.empty());
}

TEST(ParseCallerFacts, MalformedIsInvalidArgument) {
  for (
      const char* text : {
          R"([])",
          R"({"id": ""})",
          R"({"orgs": []})",
          R"({"id": "u", "orgs": "o_1"})",
          R"({"id": "u", "orgs": [{"id": "o_1"}]})",
          R"({"id": "u", "orgs": [{"id": "o_1", "role": "owner"}]})",
          R"({"id": "u", "orgs": [{"id": "o_1", "role": "admin"}, {"id": "o_1", "role": "viewer"}]})",
      }) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseCallerFacts(nlohmann::json::parse(text)).status()))
        << text;
  }
}

TEST(SplitScopes, SplitsOnAnyWhitespace) {
  EXPECT_EQ(SplitScopes(" a\tb\n\nc  "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitScopes("   ").empty());
}

}  // namespace
}  // namespace aevatar::orchestrator
