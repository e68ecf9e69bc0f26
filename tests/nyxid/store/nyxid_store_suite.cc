#include "nyxid_store_suite.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "nyxid/tokens/signing_keys.h"

namespace aevatar::nyxid {

void PrintTo(const NyxidBackendFactory& factory, std::ostream* out) { *out << factory.name; }

void NyxidStoreSuite::SetUp() {
  open_ = GetParam().make();
  if (IsSkipped()) return;  // the factory skipped (e.g. no PostgreSQL server installed)
  stores_ = open_();
  ASSERT_NE(stores_.store, nullptr);
  ASSERT_NE(stores_.nodes, nullptr);
  ASSERT_NE(stores_.signing_keys, nullptr);
}

User NewUser(const std::string& id, const std::string& username, int64_t created_at_ms) {
  User user;
  user.id = id;
  user.username = username;
  user.password_hash = "$argon2id$hash-of-" + username;
  user.created_at_ms = created_at_ms;
  return user;
}

UserService NewRoute(const std::string& id, const Owner& owner, const std::string& slug,
                     int64_t created_at_ms) {
  UserService route;
  route.id = id;
  route.slug = slug;
  route.label = "label " + slug;
  route.owner = owner;
  route.policy.forward_access_token = true;
  route.policy.delegation_token_scope = {"chrono:execute", "chrono:read"};
  route.base_url = "http://127.0.0.1:9/" + slug;
  route.created_at_ms = created_at_ms;
  route.updated_at_ms = created_at_ms;
  return route;
}

namespace {

std::vector<std::string> Ids(const std::vector<UserService>& routes) {
  std::vector<std::string> ids;
  for (const UserService& route : routes) ids.push_back(route.id);
  return ids;
}

AgentKeyRecord NewKey(const std::string& id, const std::string& user_id, int64_t created_at_ms) {
  AgentKeyRecord key;
  key.id = id;
  key.user_id = user_id;
  key.label = "ci " + id;
  key.key_hash_hex = std::string(64, id.back());
  key.key_prefix = "nyxid_ag_" + id;
  key.allowed_services = {"us_1", "chrono"};
  key.created_at_ms = created_at_ms;
  return key;
}

TEST_P(NyxidStoreSuite, UsersRoundTripAndUsernamesAreUnique) {
  User alice = NewUser("usr_a", "alice", 1000);
  alice.platform_admin = true;
  ASSERT_TRUE(store()->InsertUser(alice).ok());
  ASSERT_TRUE(store()->InsertUser(NewUser("usr_b", "bob", 2000)).ok());

  absl::StatusOr<User> found = store()->FindUserByName("alice");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id, "usr_a");
  EXPECT_EQ(found->password_hash, alice.password_hash);
  EXPECT_TRUE(found->platform_admin);
  EXPECT_EQ(found->created_at_ms, 1000);
  EXPECT_EQ(store()->FindUserById("usr_b")->username, "bob");
  EXPECT_TRUE(absl::IsNotFound(store()->FindUserByName("carol").status()));

  absl::Status dup = store()->InsertUser(NewUser("usr_c", "alice"));
  EXPECT_TRUE(absl::IsAlreadyExists(dup)) << dup;
  EXPECT_EQ(std::string(dup.message()).find(alice.password_hash), std::string::npos) << dup;

  alice.password_hash = "$argon2id$new";
  alice.platform_admin = false;
  alice.tokens_not_before_ms = 5000;
  ASSERT_TRUE(store()->UpdateUser(alice).ok());
  found = store()->FindUserById("usr_a");
  EXPECT_EQ(found->password_hash, "$argon2id$new");
  EXPECT_FALSE(found->platform_admin);
  EXPECT_EQ(found->tokens_not_before_ms, 5000);
  EXPECT_TRUE(absl::IsNotFound(store()->UpdateUser(NewUser("usr_x", "x"))));

  absl::StatusOr<std::vector<User>> users = store()->ListUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].username, "alice");  // by creation
  EXPECT_EQ((*users)[1].username, "bob");
}

TEST_P(NyxidStoreSuite, OrgsHaveUniqueSlugsAndAMembershipRoleIsReplaced) {
  ASSERT_TRUE(store()->InsertUser(NewUser("usr_a", "alice")).ok());
  ASSERT_TRUE(store()->InsertOrg({"org_1", "acme", "Acme"}).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(store()->InsertOrg({"org_2", "acme", "Other"})));
  EXPECT_EQ(store()->FindOrgBySlug("acme")->id, "org_1");
  EXPECT_EQ(store()->FindOrgById("org_1")->name, "Acme");
  EXPECT_TRUE(absl::IsNotFound(store()->FindOrgById("org_2").status()));

  ASSERT_TRUE(store()->PutMembership({"org_1", "usr_a", OrgRole::kViewer}).ok());
  ASSERT_TRUE(store()->PutMembership({"org_1", "usr_a", OrgRole::kAdmin}).ok());
  absl::StatusOr<std::vector<Membership>> memberships = store()->MembershipsOfUser("usr_a");
  ASSERT_TRUE(memberships.ok());
  ASSERT_EQ(memberships->size(), 1u);
  EXPECT_EQ((*memberships)[0].role, OrgRole::kAdmin);
  EXPECT_TRUE(store()->MembershipsOfUser("usr_b")->empty());
}

TEST_P(NyxidStoreSuite, ACatalogServiceIsReplacedByIdAndItsProviderKeyComesBackOpened) {
  CatalogService llm;
  llm.id = "cat_llm";
  llm.slug = "chrono-llm-public";
  llm.name = "Model";
  llm.kind = ServiceKind::kLlm;
  llm.base_url = "https://models.example/v1";
  llm.default_policy.delegation_token_scope = {"llm:call"};
  llm.provider_api_key = "sk-provider-secret";
  llm.model_allowlist = {"gpt-5", "gpt-5-mini"};
  llm.delegation_audiences = {"chrono-sandbox"};
  llm.allow_link_local = true;
  ASSERT_TRUE(store()->PutCatalogService(llm).ok());
  CatalogService http;
  http.id = "cat_chrono";
  http.slug = "chrono-sandbox";
  http.name = "Chrono";
  http.base_url = "http://127.0.0.1:8081";
  http.auto_connect = true;
  ASSERT_TRUE(store()->PutCatalogService(http).ok());

  absl::StatusOr<CatalogService> found = store()->FindCatalogService("cat_llm");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->kind, ServiceKind::kLlm);
  EXPECT_EQ(found->provider_api_key, "sk-provider-secret");
  EXPECT_EQ(found->model_allowlist, llm.model_allowlist);
  EXPECT_EQ(found->delegation_audiences, llm.delegation_audiences);
  EXPECT_EQ(found->default_policy.delegation_token_scope, std::vector<std::string>{"llm:call"});
  EXPECT_TRUE(found->allow_link_local);

  llm.name = "Renamed";
  llm.provider_api_key = "";
  ASSERT_TRUE(store()->PutCatalogService(llm).ok());
  absl::StatusOr<std::vector<CatalogService>> all = store()->ListCatalog();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].slug, "chrono-llm-public");  // by slug
  EXPECT_EQ((*all)[0].name, "Renamed");
  EXPECT_EQ((*all)[0].provider_api_key, "");
  EXPECT_TRUE((*all)[1].auto_connect);
  EXPECT_TRUE(absl::IsNotFound(store()->FindCatalogService("cat_none").status()));
}

TEST_P(NyxidStoreSuite, RoutesAreUniquePerOwnerBySlugAndLabelAndListedByCreation) {
  const Owner alice{OwnerKind::kUser, "usr_a"};
  const Owner acme{OwnerKind::kOrg, "org_1"};
  UserService first = NewRoute("us_1", alice, "api", 1000);
  first.node_id = "node_1";
  ASSERT_TRUE(store()->InsertUserService(first).ok());
  ASSERT_TRUE(store()->InsertUserService(NewRoute("us_2", acme, "api", 2000)).ok());
  ASSERT_TRUE(store()->InsertUserService(NewRoute("us_3", alice, "web", 3000)).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(store()->InsertUserService(NewRoute("us_4", alice, "api"))));
  UserService same_label = NewRoute("us_5", alice, "other");
  same_label.label = first.label;
  EXPECT_TRUE(absl::IsAlreadyExists(store()->InsertUserService(same_label)));

  absl::StatusOr<UserService> found = store()->FindUserService("us_1");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->owner, alice);
  EXPECT_EQ(found->node_id, std::optional<std::string>("node_1"));
  EXPECT_EQ(found->catalog_service_id, std::nullopt);
  EXPECT_TRUE(found->policy.forward_access_token);
  EXPECT_EQ(found->policy.delegation_token_scope, first.policy.delegation_token_scope);
  EXPECT_EQ(found->base_url, first.base_url);
  EXPECT_EQ(store()->FindUserServiceBySlug(acme, "api")->id, "us_2");
  EXPECT_TRUE(absl::IsNotFound(store()->FindUserServiceBySlug(acme, "web").status()));

  EXPECT_EQ(Ids(*store()->ListUserServices({alice})), (std::vector<std::string>{"us_1", "us_3"}));
  EXPECT_EQ(Ids(*store()->ListUserServices({acme, alice})),
            (std::vector<std::string>{"us_2", "us_1", "us_3"}));

  first.active = false;
  first.label = "renamed";
  first.node_id.reset();
  first.credential_source_allowed = true;
  first.updated_at_ms = 9000;
  ASSERT_TRUE(store()->UpdateUserService(first).ok());
  found = store()->FindUserService("us_1");
  EXPECT_FALSE(found->active);
  EXPECT_EQ(found->label, "renamed");
  EXPECT_EQ(found->node_id, std::nullopt);
  EXPECT_TRUE(found->credential_source_allowed);
  EXPECT_EQ(found->updated_at_ms, 9000);
  EXPECT_TRUE(absl::IsNotFound(store()->UpdateUserService(NewRoute("us_9", alice, "x"))));
}

TEST_P(NyxidStoreSuite, AutoConnectedRoutesAreListedPerCatalogService) {
  CatalogService chrono;
  chrono.id = "cat_chrono";
  chrono.slug = "chrono-sandbox";
  chrono.name = "Chrono";
  chrono.base_url = "http://127.0.0.1:8081";
  ASSERT_TRUE(store()->PutCatalogService(chrono).ok());
  UserService auto_route = NewRoute("us_1", {OwnerKind::kUser, "usr_a"}, "chrono-sandbox");
  auto_route.catalog_service_id = "cat_chrono";
  auto_route.auto_connected = true;
  UserService manual = NewRoute("us_2", {OwnerKind::kUser, "usr_b"}, "chrono-sandbox");
  manual.catalog_service_id = "cat_chrono";
  ASSERT_TRUE(store()->InsertUserService(auto_route).ok());
  ASSERT_TRUE(store()->InsertUserService(manual).ok());
  absl::StatusOr<std::vector<UserService>> listed = store()->ListAutoConnected("cat_chrono");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(Ids(*listed), std::vector<std::string>{"us_1"});
  EXPECT_EQ((*listed)[0].catalog_service_id, std::optional<std::string>("cat_chrono"));
}

TEST_P(NyxidStoreSuite, AnAgentKeyIsRevokedOnceAndOnlyByItsUser) {
  ASSERT_TRUE(store()->InsertUser(NewUser("usr_a", "alice")).ok());
  ASSERT_TRUE(store()->InsertUser(NewUser("usr_b", "bob")).ok());
  const AgentKeyRecord key = NewKey("ak_1", "usr_a", 1000);
  ASSERT_TRUE(store()->InsertAgentKey(key).ok());
  ASSERT_TRUE(store()->InsertAgentKey(NewKey("ak_2", "usr_a", 2000)).ok());
  // The same id (and hash) again is refused, whoever inserts it.
  EXPECT_TRUE(absl::IsAlreadyExists(store()->InsertAgentKey(NewKey("ak_1", "usr_b", 1))));

  absl::StatusOr<AgentKeyRecord> found = store()->FindAgentKeyByHash(key.key_hash_hex);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id, "ak_1");
  EXPECT_EQ(found->allowed_services, key.allowed_services);
  EXPECT_EQ(found->revoked_at_ms, std::nullopt);

  EXPECT_TRUE(absl::IsNotFound(store()->RevokeAgentKey("usr_b", "ak_1", 5000)));
  EXPECT_TRUE(absl::IsNotFound(store()->RevokeAgentKey("usr_a", "ak_none", 5000)));
  ASSERT_TRUE(store()->RevokeAgentKey("usr_a", "ak_1", 5000).ok());
  ASSERT_TRUE(store()->RevokeAgentKey("usr_a", "ak_1", 7000).ok());  // idempotent
  EXPECT_EQ(store()->FindAgentKeyByHash(key.key_hash_hex)->revoked_at_ms,
            std::optional<int64_t>(5000));

  absl::StatusOr<std::vector<AgentKeyRecord>> listed = store()->ListAgentKeys("usr_a");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, "ak_1");
  EXPECT_EQ((*listed)[1].revoked_at_ms, std::nullopt);
  EXPECT_TRUE(store()->ListAgentKeys("usr_b")->empty());
}

TEST_P(NyxidStoreSuite, AClientIsFoundBySecretHashAndReplacedByName) {
  ASSERT_TRUE(store()->PutClient({"chrono-sandbox", std::string(64, 'a')}).ok());
  ASSERT_TRUE(store()->PutClient({"chrono-sandbox", std::string(64, 'b')}).ok());
  EXPECT_TRUE(absl::IsNotFound(store()->FindClientBySecretHash(std::string(64, 'a')).status()));
  EXPECT_EQ(store()->FindClientBySecretHash(std::string(64, 'b'))->name, "chrono-sandbox");
}

TEST_P(NyxidStoreSuite, TheAdminAuditLogIsReadInOrderAfterASequenceNumber) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(store()
                    ->AppendAdminAudit({0, 1000 + i, "usr_a", "route.created", "route",
                                        "us_" + std::to_string(i), R"({"slug":"api"})"})
                    .ok());
  }
  absl::StatusOr<std::vector<AdminAuditEntry>> page = store()->ListAdminAudit(0, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_LT((*page)[0].seq, (*page)[1].seq);
  EXPECT_EQ((*page)[0].target_id, "us_1");
  EXPECT_EQ((*page)[0].detail, R"({"slug":"api"})");
  absl::StatusOr<std::vector<AdminAuditEntry>> rest = store()->ListAdminAudit((*page)[1].seq, 10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].target_id, "us_3");
  EXPECT_EQ((*rest)[0].at_ms, 1003);
}

TEST_P(NyxidStoreSuite, ARegistrationTokenIsConsumedOnceAndNotAfterItExpires) {
  ASSERT_TRUE(nodes()->InsertToken({"hash-1", "usr_a", "laptop", 10'000}).ok());
  ASSERT_TRUE(nodes()->InsertToken({"hash-2", "usr_a", "desktop", 10'000}).ok());
  absl::StatusOr<NodeRegistrationToken> used = nodes()->ConsumeToken("hash-1", 5000);
  ASSERT_TRUE(used.ok()) << used.status();
  EXPECT_EQ(used->user_id, "usr_a");
  EXPECT_EQ(used->node_name, "laptop");
  EXPECT_TRUE(absl::IsNotFound(nodes()->ConsumeToken("hash-1", 5001).status()));
  EXPECT_TRUE(absl::IsNotFound(nodes()->ConsumeToken("hash-2", 10'000).status()));  // expired
  EXPECT_TRUE(absl::IsNotFound(nodes()->ConsumeToken("hash-none", 1).status()));
}

TEST_P(NyxidStoreSuite, NodesAreUniquePerUserAndDeletedOnlyByTheirUser) {
  ASSERT_TRUE(nodes()->InsertNode({"node_1", "usr_a", "laptop", "secret-1", 1000, 1000}).ok());
  ASSERT_TRUE(nodes()->InsertNode({"node_2", "usr_b", "laptop", "secret-2", 2000, 2000}).ok());
  EXPECT_TRUE(
      absl::IsAlreadyExists(nodes()->InsertNode({"node_3", "usr_a", "laptop", "s-3", 3000, 3000})));
  EXPECT_EQ(nodes()->FindNodeBySecretHash("secret-2")->id, "node_2");
  ASSERT_TRUE(nodes()->TouchNode("node_1", 4000).ok());
  EXPECT_EQ(nodes()->FindNode("node_1")->last_seen_ms, 4000);
  EXPECT_EQ(nodes()->ListNodes("usr_a")->size(), 1u);

  EXPECT_TRUE(absl::IsNotFound(nodes()->DeleteNode("usr_b", "node_1")));
  ASSERT_TRUE(nodes()->DeleteNode("usr_a", "node_1").ok());
  EXPECT_TRUE(absl::IsNotFound(nodes()->FindNode("node_1").status()));
  EXPECT_TRUE(absl::IsNotFound(nodes()->FindNodeBySecretHash("secret-1").status()));
}

TEST_P(NyxidStoreSuite, AnSshTargetIsReplacedByItsRoute) {
  ASSERT_TRUE(nodes()->PutSshTarget({"us_1", "10.0.0.5", 22, {"deploy"}}).ok());
  ASSERT_TRUE(nodes()->PutSshTarget({"us_1", "10.0.0.6", 2222, {"deploy", "ops"}}).ok());
  absl::StatusOr<SshTarget> target = nodes()->FindSshTarget("us_1");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->host, "10.0.0.6");
  EXPECT_EQ(target->port, 2222);
  EXPECT_EQ(target->principals, (std::vector<std::string>{"deploy", "ops"}));
  EXPECT_TRUE(absl::IsNotFound(nodes()->FindSshTarget("us_2").status()));
}

TEST_P(NyxidStoreSuite, TheSigningKeyDocumentIsCreatedOnceAndChangedOnlyWhenItDiffers) {
  SigningKeyStorage& keys = *stores_.signing_keys;
  EXPECT_TRUE(absl::IsNotFound(keys.Read().status()));
  int calls = 0;
  ASSERT_TRUE(keys.Update([&](const std::optional<std::string>& current) {
                    ++calls;
                    EXPECT_EQ(current, std::nullopt);
                    return absl::StatusOr<std::string>("first");
                  })
                  .ok());
  EXPECT_EQ(*keys.Read(), "first");
  // A refused change leaves the document as it was.
  EXPECT_FALSE(keys.Update([](const std::optional<std::string>&) {
                     return absl::StatusOr<std::string>(absl::InternalError("refused"));
                   })
                   .ok());
  EXPECT_EQ(*keys.Read(), "first");
  ASSERT_TRUE(keys.Update([&](const std::optional<std::string>& current) {
                    ++calls;
                    EXPECT_EQ(current, std::optional<std::string>("first"));
                    return absl::StatusOr<std::string>("second");
                  })
                  .ok());
  EXPECT_EQ(*keys.Read(), "second");
  EXPECT_EQ(calls, 2);
}

// What FactsDigestCache relies on: every change a caller's /me or /keys could
// show moves the generation, seen from this opening and from another (a
// restarted broker, another replica); reads and other tables leave it.
TEST_P(NyxidStoreSuite, EveryChangeOfACallersFactsMovesTheFactsGeneration) {
  NyxidStores other = open_();
  ASSERT_NE(other.store, nullptr);
  auto generation = [&](NyxidStore* s) { return s->FactsGeneration().value_or(-1); };
  int64_t last = generation(store());
  ASSERT_GE(last, 0);
  // A restored database must not reach a remembered number again: each
  // move goes to at least the wall clock in microseconds (less the 1 ms
  // SQLite's clock rounds to).
  auto wall_clock_us = [] {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  int64_t wall_us = wall_clock_us();  // before the change each call checks
  auto expect_moved = [&](absl::Status change, const char* what) {
    ASSERT_TRUE(change.ok()) << what << ": " << change;
    const int64_t now = generation(store());
    EXPECT_GT(now, last) << what;
    EXPECT_GE(now, wall_us - 1000) << what;
    EXPECT_EQ(generation(other.store.get()), now) << what << ", seen from another opening";
    last = now;
    wall_us = wall_clock_us();
  };
  User alice = NewUser("usr_a", "alice");
  expect_moved(store()->InsertUser(alice), "a new user");
  alice.tokens_not_before_ms = 5000;
  expect_moved(store()->UpdateUser(alice), "a logout");
  expect_moved(store()->InsertOrg({"org_1", "acme", "Acme"}), "a new organisation");
  expect_moved(store()->PutMembership({"org_1", "usr_a", OrgRole::kViewer}), "a membership");
  expect_moved(store()->PutMembership({"org_1", "usr_a", OrgRole::kAdmin}), "a changed role");
  CatalogService chrono;
  chrono.id = "cat_chrono";
  chrono.slug = "chrono-sandbox";
  chrono.name = "Chrono";
  chrono.kind = ServiceKind::kHttp;
  chrono.base_url = "http://127.0.0.1:1";
  expect_moved(store()->PutCatalogService(chrono), "a catalog service");
  chrono.base_url = "http://127.0.0.1:2";
  expect_moved(store()->PutCatalogService(chrono), "a replaced catalog service");
  UserService route = NewRoute("us_1", {OwnerKind::kUser, "usr_a"}, "api");
  expect_moved(store()->InsertUserService(route), "a new route");
  route.active = false;
  expect_moved(store()->UpdateUserService(route), "a deactivated route");
  expect_moved(store()->InsertAgentKey(NewKey("ak_1", "usr_a", 1000)), "a new Agent Key");
  expect_moved(store()->RevokeAgentKey("usr_a", "ak_1", 5000), "a revoked Agent Key");
  expect_moved(other.store->InsertUser(NewUser("usr_b", "bob")), "a user added elsewhere");

  ASSERT_TRUE(store()->ListUserServices({{OwnerKind::kUser, "usr_a"}}).ok());
  ASSERT_TRUE(store()->FindUserById("usr_a").ok());
  ASSERT_TRUE(store()->PutClient({"chrono-sandbox", std::string(64, 'a')}).ok());
  ASSERT_TRUE(store()->AppendAdminAudit({0, 1000, "usr_a", "rotate", "key", "k1", "{}"}).ok());
  EXPECT_EQ(generation(store()), last) << "reads, clients and the audit log are not facts";
}

TEST_P(NyxidStoreSuite, AnotherOpeningSeesEveryCommittedWriteAndTheSameSigningKeys) {
  ASSERT_TRUE(store()->InsertUser(NewUser("usr_a", "alice")).ok());
  ASSERT_TRUE(store()->InsertAgentKey(NewKey("ak_1", "usr_a", 1000)).ok());
  ASSERT_TRUE(store()->RevokeAgentKey("usr_a", "ak_1", 5000).ok());
  ASSERT_TRUE(
      store()->InsertUserService(NewRoute("us_1", {OwnerKind::kUser, "usr_a"}, "api")).ok());
  ASSERT_TRUE(nodes()->InsertNode({"node_1", "usr_a", "laptop", "secret-1", 1000, 1000}).ok());
  const int64_t now = base::NowUnixSecs();
  auto ring = KeyRing::LoadOrCreate(std::move(stores_.signing_keys), now, 3900);
  ASSERT_TRUE(ring.ok()) << ring.status();

  NyxidStores again = open_();
  ASSERT_NE(again.store, nullptr);
  EXPECT_EQ(again.store->FindUserByName("alice")->id, "usr_a");
  EXPECT_EQ(again.store->FindAgentKeyByHash(std::string(64, '1'))->revoked_at_ms,
            std::optional<int64_t>(5000));
  EXPECT_EQ(again.store->FindUserService("us_1")->slug, "api");
  EXPECT_EQ(again.nodes->FindNode("node_1")->name, "laptop");
  auto ring_again = KeyRing::LoadOrCreate(std::move(again.signing_keys), now, 3900);
  ASSERT_TRUE(ring_again.ok()) << ring_again.status();
  EXPECT_EQ((*ring_again)->current_kid(), (*ring)->current_kid());
  EXPECT_EQ((*ring_again)->Published(now).keys().size(), (*ring)->Published(now).keys().size());
  EXPECT_TRUE(store()->Ping().ok());
}

}  // namespace
}  // namespace aevatar::nyxid
