// The route access matrix over real HTTP against the real `nyxid serve`:
// {personal owner, org admin, org member with allowed true/false, org viewer,
// stranger} x {see in /keys, use via the proxy, PUT}. The proxied upstream is
// the broker's own /healthz, so "use" means the request really went through.
#include "gtest/gtest.h"
#include "nyxid_fixture.h"

namespace aevatar::testing {
namespace {

std::string Bootstrap(uint16_t self_port) {
  return R"yaml(
users:
  - {username: pat, password: pat-password-1}
  - {username: ada, password: ada-password-1}
  - {username: mia, password: mia-password-1}
  - {username: vic, password: vic-password-1}
  - {username: sam, password: sam-password-1}
  - {username: root, password: root-password-1, platform_admin: true}
orgs:
  - slug: acme
    members:
      - {username: ada, role: admin}
      - {username: mia, role: member}
      - {username: vic, role: viewer}
catalog:
  - id: cat_self
    slug: self
    name: The broker itself
    base_url: http://127.0.0.1:)yaml" +
         std::to_string(self_port) + R"yaml(
    default_policy: {forward_access_token: false, inject_delegation_token: false}
user_services:
  - {owner: {user: pat}, catalog_service_id: cat_self, slug: pat-route}
  - {owner: {user: pat}, catalog_service_id: cat_self, slug: pat-auto, auto_connected: true}
  - {owner: {org: acme}, catalog_service_id: cat_self, slug: org-allowed,
     credential_source: {allowed: true}}
  - {owner: {org: acme}, catalog_service_id: cat_self, slug: org-denied,
     credential_source: {allowed: false}}
)yaml";
}

class NyxidAccess : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    uint16_t port = PickFreePort();
    fixture_ = new NyxidFixture(Bootstrap(port), {}, port);
    for (const char* user : {"pat", "ada", "mia", "vic", "sam", "root"}) {
      tokens_[user] = fixture_->Login(user, std::string(user) + "-password-1");
    }
    ids_["pat-route"] = fixture_->KeyBySlug(tokens_["pat"], "pat-route").value("id", "");
    ids_["pat-auto"] = fixture_->KeyBySlug(tokens_["pat"], "pat-auto").value("id", "");
    ids_["org-allowed"] = fixture_->KeyBySlug(tokens_["ada"], "org-allowed").value("id", "");
    ids_["org-denied"] = fixture_->KeyBySlug(tokens_["ada"], "org-denied").value("id", "");
  }
  static void TearDownTestSuite() { delete fixture_; }
  void SetUp() override {
    ASSERT_TRUE(fixture_->ok()) << fixture_->service().ReadLog();
    for (auto& [user, token] : tokens_) ASSERT_FALSE(token.empty()) << user;
    for (auto& [slug, id] : ids_) ASSERT_FALSE(id.empty()) << slug;
  }
  static NyxidFixture& f() { return *fixture_; }

  static http::ClientResponse Proxy(const std::string& user, const std::string& slug,
                                    const std::string& via) {
    return f().Call("GET", "/api/v1/proxy/" + slug + "/healthz?_nyxid_via=" + via, tokens_[user]);
  }

  static NyxidFixture* fixture_;
  static std::map<std::string, std::string> tokens_;
  static std::map<std::string, std::string> ids_;
};
NyxidFixture* NyxidAccess::fixture_ = nullptr;
std::map<std::string, std::string> NyxidAccess::tokens_;
std::map<std::string, std::string> NyxidAccess::ids_;

struct Cell {
  std::string who;
  std::string user;
  std::string slug;
  bool sees;
  bool usable;     // the /keys "usable" flag, when seen
  int use_status;  // through the proxy
  std::string use_code;
  int put_status;
  std::string put_code;
};

TEST_F(NyxidAccess, MatrixOfCallersTimesSeeUseAndPut) {
  const std::vector<Cell> cells = {
      {"personal owner", "pat", "pat-route", true, true, 200, "", 200, ""},
      {"org admin", "ada", "org-allowed", true, true, 200, "", 200, ""},
      {"org member, allowed=true", "mia", "org-allowed", true, true, 200, "", 403,
       "USER_SERVICE_WRITE_FORBIDDEN"},
      {"org member, allowed=false", "mia", "org-denied", true, false, 403, "ROUTE_USE_DENIED", 403,
       "USER_SERVICE_WRITE_FORBIDDEN"},
      {"org viewer", "vic", "org-allowed", true, true, 200, "", 403,
       "USER_SERVICE_WRITE_FORBIDDEN"},
      {"org viewer, allowed=false", "vic", "org-denied", true, false, 403, "ROUTE_USE_DENIED", 403,
       "USER_SERVICE_WRITE_FORBIDDEN"},
      {"stranger, personal route", "sam", "pat-route", false, false, 404, "USER_SERVICE_NOT_FOUND",
       404, "USER_SERVICE_NOT_FOUND"},
      {"stranger, org route", "sam", "org-allowed", false, false, 404, "USER_SERVICE_NOT_FOUND",
       404, "USER_SERVICE_NOT_FOUND"},
  };
  for (const Cell& cell : cells) {
    SCOPED_TRACE(cell.who);
    const std::string id = ids_[cell.slug];
    // See.
    nlohmann::json key = f().KeyBySlug(tokens_[cell.user], cell.slug);
    EXPECT_EQ(!key.is_null(), cell.sees);
    if (!key.is_null()) {
      EXPECT_EQ(key["id"], id);
      EXPECT_EQ(key["usable"], cell.usable);
      EXPECT_TRUE(key.contains("auto_connected"));
    }
    auto one = f().Call("GET", "/api/v1/user-services/" + id, tokens_[cell.user]);
    EXPECT_EQ(one.status, cell.sees ? 200 : 404);
    // Use.
    auto used = Proxy(cell.user, cell.slug, id);
    if (cell.use_status == 200) {
      EXPECT_EQ(used.status, 200) << used.body;
      EXPECT_EQ(JsonOf(used).value("status", ""), "ok");
    } else {
      ExpectProblem(used, cell.use_status, cell.use_code);
    }
    // Put (a harmless label change).
    auto put = f().Call("PUT", "/api/v1/user-services/" + id, tokens_[cell.user],
                        R"({"label":"renamed by )" + cell.user + R"("})");
    if (cell.put_status == 200) {
      EXPECT_EQ(put.status, 200) << put.body;
      EXPECT_EQ(JsonOf(put)["label"], "renamed by " + cell.user);
    } else {
      ExpectProblem(put, cell.put_status, cell.put_code);
    }
  }
}

TEST_F(NyxidAccess, AutoConnectedRoutesAreReadOnlyAndCatalogIdsAreNotUserServices) {
  ExpectProblem(f().Call("PUT", "/api/v1/user-services/" + ids_["pat-auto"], tokens_["pat"],
                         R"({"forward_access_token":true})"),
                403, "USER_SERVICE_AUTO_CONNECTED");
  ExpectProblem(f().Call("PUT", "/api/v1/user-services/cat_self", tokens_["root"],
                         R"({"forward_access_token":true})"),
                404, "USER_SERVICE_NOT_FOUND");
  ExpectProblem(f().Call("PUT", "/api/v1/user-services/" + ids_["pat-route"], tokens_["pat"],
                         R"({"auto_connected":true})"),
                400, "USER_SERVICE_FIELD_READ_ONLY");
  ExpectProblem(f().Call("PUT", "/api/v1/user-services/" + ids_["pat-route"], tokens_["pat"],
                         R"({"catalog_service_id":"cat_self"})"),
                400, "USER_SERVICE_FIELD_READ_ONLY");
}

TEST_F(NyxidAccess, PutIsPartialAndScopesAreASet) {
  const std::string path = "/api/v1/user-services/" + ids_["pat-route"];
  auto put = f().Call("PUT", path, tokens_["pat"],
                      R"({"delegation_token_scope":"sandbox:execute proxy:* sandbox:execute"})");
  ASSERT_EQ(put.status, 200) << put.body;
  put = f().Call("PUT", path, tokens_["pat"], R"({"forward_access_token":true})");
  ASSERT_EQ(put.status, 200) << put.body;
  nlohmann::json route = JsonOf(f().Call("GET", path, tokens_["pat"]));
  EXPECT_EQ(route["forward_access_token"], true);
  EXPECT_EQ(route["inject_delegation_token"], false);
  EXPECT_EQ(route["delegation_token_scope"], "proxy:* sandbox:execute");
  EXPECT_FALSE(route.contains("auto_connected"));  // only /keys carries it
  nlohmann::json listed = JsonOf(f().Call("GET", "/api/v1/user-services", tokens_["pat"]));
  ASSERT_TRUE(listed["user_services"].is_array());
  for (const nlohmann::json& entry : listed["user_services"]) {
    EXPECT_FALSE(entry.contains("auto_connected"));
    for (const char* field :
         {"id", "slug", "label", "catalog_service_id", "owner", "active", "forward_access_token",
          "inject_delegation_token", "delegation_token_scope", "credential_source", "node_id"}) {
      EXPECT_TRUE(entry.contains(field)) << field;
    }
  }
}

TEST_F(NyxidAccess, ProxyNeedsTheExactActiveRoute) {
  ExpectProblem(f().Call("GET", "/api/v1/proxy/pat-route/healthz", tokens_["pat"]), 400,
                "NYXID_VIA_REQUIRED");
  ExpectProblem(Proxy("pat", "org-allowed", ids_["pat-route"]), 404, "ROUTE_SLUG_MISMATCH");
  ExpectProblem(Proxy("pat", "pat-route", "us_doesnotexist"), 404, "USER_SERVICE_NOT_FOUND");
  ExpectProblem(Proxy("pat", "pat-route", "cat_self"), 404, "USER_SERVICE_NOT_FOUND");
  ExpectProblem(
      f().Call("GET", "/api/v1/proxy/pat-route/healthz?_nyxid_via=" + ids_["pat-route"], ""), 401,
      "CREDENTIAL_MISSING");
  ExpectProblem(
      f().Call("GET", "/api/v1/proxy/pat-route/a/%2e%2e/x?_nyxid_via=" + ids_["pat-route"],
               tokens_["pat"]),
      400, "PROXY_PATH_INVALID");

  const std::string path = "/api/v1/user-services/" + ids_["org-allowed"];
  ASSERT_EQ(f().Call("PUT", path, tokens_["ada"], R"({"active":false})").status, 200);
  ExpectProblem(Proxy("mia", "org-allowed", ids_["org-allowed"]), 403, "ROUTE_INACTIVE");
  ASSERT_EQ(f().Call("PUT", path, tokens_["ada"], R"({"active":true})").status, 200);
  EXPECT_EQ(Proxy("mia", "org-allowed", ids_["org-allowed"]).status, 200);
}

TEST_F(NyxidAccess, PersonalAliasCreationConflictsOnTheSameSlug) {
  const std::string body =
      R"json({"catalog_service_id":"cat_self","slug":"self-alias","label":"Self (alias)"})json";
  auto created = f().Call("POST", "/api/v1/user-services", tokens_["mia"], body);
  ASSERT_EQ(created.status, 201) << created.body;
  nlohmann::json route = JsonOf(created);
  EXPECT_EQ(route["owner"]["type"], "user");
  EXPECT_EQ(route["catalog_service_id"], "cat_self");
  EXPECT_NE(route["id"], "cat_self");
  ExpectProblem(f().Call("POST", "/api/v1/user-services", tokens_["mia"], body), 409,
                "USER_SERVICE_CONFLICT");
  // Another user may have the same alias.
  EXPECT_EQ(f().Call("POST", "/api/v1/user-services", tokens_["vic"], body).status, 201);
  ExpectProblem(f().Call("POST", "/api/v1/user-services", tokens_["mia"],
                         R"({"catalog_service_id":"cat_none"})"),
                400, "CATALOG_SERVICE_UNKNOWN");
}

TEST_F(NyxidAccess, ResyncIdentityIsForPlatformAdminsOnly) {
  ExpectProblem(f().Call("POST", "/api/v1/services/cat_self/resync-identity", tokens_["ada"]), 403,
                "PLATFORM_ADMIN_REQUIRED");
  auto resync = f().Call("POST", "/api/v1/services/cat_self/resync-identity", tokens_["root"]);
  EXPECT_EQ(resync.status, 200) << resync.body;
  ExpectProblem(f().Call("POST", "/api/v1/services/cat_none/resync-identity", tokens_["root"]), 404,
                "CATALOG_SERVICE_NOT_FOUND");
}

TEST_F(NyxidAccess, CatalogAndMe) {
  nlohmann::json catalog = JsonOf(f().Call("GET", "/api/v1/catalog", tokens_["sam"]));
  ASSERT_EQ(catalog["services"].size(), 1u);
  EXPECT_EQ(catalog["services"][0]["slug"], "self");
  EXPECT_FALSE(catalog["services"][0].contains("base_url"));
  nlohmann::json me = JsonOf(f().Call("GET", "/api/v1/me", tokens_["ada"]));
  EXPECT_EQ(me["username"], "ada");
  EXPECT_EQ(me["credential_kind"], "AccessToken");
  ASSERT_EQ(me["orgs"].size(), 1u);
  EXPECT_EQ(me["orgs"][0]["role"], "admin");
}

}  // namespace
}  // namespace aevatar::testing
