// The bootstrap file: parsing, idempotent application, auto-connection, resync.
#include "nyxid/bootstrap/bootstrap.h"

#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid/routes/route_ops.h"

namespace aevatar::nyxid {
namespace {

constexpr char kYaml[] = R"yaml(
users:
  - username: alice
    password: "s3cret pass"
    platform_admin: true
  - username: bob
    password_hash: "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$aGFzaA"
orgs:
  - slug: acme
    name: Acme
    members:
      - {username: alice, role: admin}
      - {username: bob, role: viewer}
catalog:
  - id: cat_chrono
    slug: chrono-sandbox
    name: Chrono Sandbox
    base_url: http://127.0.0.1:9
    auto_connect: true
    default_policy:
      forward_access_token: true
      inject_delegation_token: true
      delegation_token_scope: "sandbox:execute proxy:*"
  - id: cat_ssh
    slug: my-host
    kind: ssh
user_services:
  - owner: {org: acme}
    catalog_service_id: cat_chrono
    slug: chrono-acme
    credential_source: {allowed: true}
    node_id: node_1
)yaml";

TEST(Bootstrap, ParsesEveryKind) {
  auto spec = ParseBootstrap(kYaml);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->users.size(), 2u);
  EXPECT_TRUE(spec->users[0].platform_admin);
  ASSERT_EQ(spec->orgs.size(), 1u);
  EXPECT_EQ(spec->orgs[0].members[1].role, OrgRole::kViewer);
  ASSERT_EQ(spec->catalog.size(), 2u);
  EXPECT_EQ(spec->catalog[0].default_policy.delegation_token_scope,
            (std::vector<std::string>{"proxy:*", "sandbox:execute"}));
  EXPECT_EQ(spec->catalog[1].kind, ServiceKind::kSsh);
  ASSERT_EQ(spec->user_services.size(), 1u);
  EXPECT_TRUE(spec->user_services[0].credential_source_allowed);
  EXPECT_EQ(spec->user_services[0].node_id, "node_1");
}

TEST(Bootstrap, RejectsBadEntriesWithoutQuotingSecrets) {
  auto bad_hash = ParseBootstrap("users: [{username: x, password_hash: plaintext-secret}]");
  EXPECT_FALSE(bad_hash.ok());
  EXPECT_EQ(std::string(bad_hash.status().message()).find("plaintext-secret"), std::string::npos);
  EXPECT_FALSE(ParseBootstrap("orgs: [{slug: acme, members: [{username: a, role: owner}]}]").ok());
  EXPECT_FALSE(ParseBootstrap("catalog: [{id: c, slug: Bad Slug, base_url: http://h}]").ok());
  EXPECT_FALSE(ParseBootstrap("users: [").ok());
}

TEST(Bootstrap, ApplyingTwiceChangesNothingAndAutoConnects) {
  auto spec = ParseBootstrap(kYaml);
  ASSERT_TRUE(spec.ok());
  auto store = OpenSqliteNyxidStore(":memory:", base::RandomBytes(32));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(ApplyBootstrap(*spec, **store, 1000).ok());
  auto alice = (*store)->FindUserByName("alice");
  ASSERT_TRUE(alice.ok());
  EXPECT_TRUE(base::VerifyPassword(alice->password_hash, "s3cret pass"));
  const std::string hash = alice->password_hash;
  auto acme = (*store)->FindOrgBySlug("acme");
  ASSERT_TRUE(acme.ok());
  auto routes =
      (*store)->ListUserServices({{OwnerKind::kUser, alice->id}, {OwnerKind::kOrg, acme->id}});
  ASSERT_TRUE(routes.ok());
  ASSERT_EQ(routes->size(), 2u);  // alice's auto-connected route and the org route
  EXPECT_TRUE((*routes)[0].auto_connected);
  EXPECT_EQ((*routes)[0].slug, "chrono-sandbox");
  EXPECT_TRUE((*routes)[0].policy.inject_delegation_token);

  ASSERT_TRUE(ApplyBootstrap(*spec, **store, 2000).ok());
  EXPECT_EQ((*store)->FindUserByName("alice")->password_hash, hash);  // not re-hashed
  auto again =
      (*store)->ListUserServices({{OwnerKind::kUser, alice->id}, {OwnerKind::kOrg, acme->id}});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ((*again)[0].id, (*routes)[0].id);
}

TEST(Bootstrap, ResyncReappliesTheCatalogPolicyToAutoConnectedRoutesOnly) {
  auto spec = ParseBootstrap(kYaml);
  ASSERT_TRUE(spec.ok());
  auto store = OpenSqliteNyxidStore(":memory:", base::RandomBytes(32));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(ApplyBootstrap(*spec, **store, 1000).ok());
  CatalogService catalog = *(*store)->FindCatalogService("cat_chrono");
  catalog.default_policy.forward_access_token = false;
  catalog.default_policy.delegation_token_scope = {"proxy:*"};
  ASSERT_TRUE((*store)->PutCatalogService(catalog).ok());
  auto changed = ResyncIdentity(**store, "cat_chrono", 3000);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, 2);  // alice's and bob's auto-connected routes
  auto auto_routes = (*store)->ListAutoConnected("cat_chrono");
  for (const UserService& route : *auto_routes) {
    EXPECT_FALSE(route.policy.forward_access_token);
    EXPECT_EQ(route.policy.delegation_token_scope, (std::vector<std::string>{"proxy:*"}));
  }
  auto acme = (*store)->FindOrgBySlug("acme");
  auto org_route = (*store)->FindUserServiceBySlug({OwnerKind::kOrg, acme->id}, "chrono-acme");
  EXPECT_TRUE(org_route->policy.forward_access_token);  // not auto-connected: untouched
  EXPECT_EQ(*ResyncIdentity(**store, "cat_chrono", 4000), 0);
  EXPECT_TRUE(absl::IsNotFound(ResyncIdentity(**store, "cat_none", 4000).status()));
}

}  // namespace
}  // namespace aevatar::nyxid
