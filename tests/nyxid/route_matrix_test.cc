// The adversarial matrix of NyxID's router: every route, called on alice's
// resources with each credential an attacker might hold, must answer what
// one table says. A route added without a row fails the test.
//
// Attackers: no credential; a forged token; bob's token (another user);
// vera's token (a viewer of alice's org); alice's own Agent Key restricted to
// another service; a delegation token of alice's minted for another
// audience. Each request gets freshly minted credentials, so a logout or
// password change in one row never changes another.
#include "testing/route_matrix.h"

#include <filesystem>
#include <map>

#include "base/clock.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid/api/http_api.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "nyxid/nodes/node_hub.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/tokens/agent_keys.h"
#include "testing/openapi_check.h"

namespace aevatar::nyxid {
namespace {

using nlohmann::json;

using testing::Attacker;
using testing::Authenticated;
using testing::Everyone;
using testing::kAttackers;
using testing::kForeignDelegation;
using testing::kForged;
using testing::kNone;
using testing::kOrgViewer;
using testing::kOtherUser;
using testing::kOwn;
using testing::kRestrictedKey;
using Row = testing::MatrixRow;

constexpr char kBootstrap[] = R"yaml(
users:
  - {username: alice, password: alice-password-1}
  - {username: bob, password: bob-password-1}
  - {username: vera, password: vera-password-1}
orgs:
  - slug: acme
    members: [{username: alice, role: admin}, {username: vera, role: viewer}]
catalog:
  - id: cat_chrono
    slug: chrono-sandbox
    base_url: "http://127.0.0.1:9"
    default_policy: {forward_access_token: true, inject_delegation_token: true,
                     delegation_token_scope: "proxy:*"}
user_services:
  - {owner: {user: alice}, catalog_service_id: cat_chrono}
  - {owner: {org: acme}, catalog_service_id: cat_chrono, slug: acme-chrono}
)yaml";

class NyxidRouteMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nyxid_route_matrix.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = OpenSqliteNyxidStore(dir_ + "/nyxid.db", base::RandomBytes(32));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto nodes = OpenSqliteNodeStore(dir_ + "/nodes.db");
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    nodes_ = std::move(*nodes);
    auto keys = KeyRing::LoadOrCreate(dir_, base::NowUnixSecs(), 3900);
    ASSERT_TRUE(keys.ok()) << keys.status();
    keys_ = std::move(*keys);
    tokens_ = std::make_unique<TokenService>(keys_.get(), "nyxid", base::NowUnixSecs);
    auth_ = std::make_unique<Authenticator>(store_.get(), tokens_.get());
    auto spec = ParseBootstrap(kBootstrap);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_TRUE(ApplyBootstrap(*spec, *store_, base::NowUnixMs()).ok());
    HttpApiDeps deps;
    deps.store = store_.get();
    deps.keys = keys_.get();
    deps.tokens = tokens_.get();
    deps.auth = auth_.get();
    deps.proxy_timeout = std::chrono::seconds(2);
    deps.nodes = nodes_.get();
    deps.hub = &hub_;
    router_ = BuildHttpApi(deps);

    alice_ = *store_->FindUserByName("alice");
    bob_ = *store_->FindUserByName("bob");
    vera_ = *store_->FindUserByName("vera");
    route_ = *store_->FindUserServiceBySlug({OwnerKind::kUser, alice_.id}, "chrono-sandbox");
    NewAgentKey key =
        GenerateAgentKey(alice_.id, "restricted", {"some-other-service"}, base::NowUnixMs());
    ASSERT_TRUE(store_->InsertAgentKey(key.record).ok());
    restricted_key_ = key.secret;
    agent_key_id_ = key.record.id;
    NodeRecord node{"node_alice1", alice_.id, "laptop", base::Sha256Hex("nyxid_node_x"), 1, 1};
    ASSERT_TRUE(nodes_->InsertNode(node).ok());
    UserService ssh;
    ssh.id = "us_alice_ssh";
    ssh.slug = ssh.label = "box";
    ssh.owner = {OwnerKind::kUser, alice_.id};
    ssh.node_id = node.id;
    ssh.base_url = "ssh://127.0.0.1:2222";
    ASSERT_TRUE(store_->InsertUserService(ssh).ok());
    ASSERT_TRUE(nodes_->PutSshTarget({ssh.id, "127.0.0.1", 2222, {"alice"}}).ok());
    alice_ids_ = {alice_.id, route_.id, agent_key_id_, node.id, ssh.id};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // As a login issues it: dated after the account's last logout, which an
  // earlier row may have done in the same millisecond.
  std::string FreshAccess(const User& user) const {
    absl::StatusOr<User> stored = store_->FindUserById(user.id);
    return tokens_->IssueAccess(user.id, user.username,
                                stored.ok() ? stored->tokens_not_before_ms : 0);
  }

  std::string Credential(Attacker attacker) const {
    switch (attacker) {
      case kNone:
        return "";
      case kForged:
        return "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.";
      case kOtherUser:
        return FreshAccess(bob_);
      case kOrgViewer:
        return FreshAccess(vera_);
      case kRestrictedKey:
        return restricted_key_;
      case kForeignDelegation:
        return tokens_->MintDelegation(alice_.id, "some-other-audience", {"proxy:*"});
    }
    return "";
  }

  // The concrete path of `pattern` on alice's resources.
  std::string PathOf(const std::string& pattern) const {
    std::string path = pattern;
    auto fill = [&](const std::string& param, const std::string& value) {
      if (size_t at = path.find(param); at != std::string::npos)
        path.replace(at, param.size(), value);
    };
    if (pattern.rfind("/api/v1/agent-keys/", 0) == 0) fill("{id}", agent_key_id_);
    if (pattern.rfind("/api/v1/user-services/", 0) == 0) fill("{id}", route_.id);
    if (pattern.rfind("/api/v1/services/", 0) == 0) fill("{id}", "cat_chrono");
    if (pattern.rfind("/api/v1/nodes/", 0) == 0) fill("{id}", "node_alice1");
    fill("{service}", "us_alice_ssh");
    fill("{slug}", route_.slug);
    fill("{path...}", "x");
    if (pattern.rfind("/api/v1/proxy/", 0) == 0) path += "?_nyxid_via=" + route_.id;
    return path;
  }

  std::string dir_;
  std::unique_ptr<NyxidStore> store_;
  std::unique_ptr<NodeStore> nodes_;
  NodeHub hub_;
  std::unique_ptr<KeyRing> keys_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<http::Router> router_;
  User alice_, bob_, vera_;
  UserService route_;
  std::string restricted_key_, agent_key_id_;
  std::vector<std::string> alice_ids_;
};

std::map<std::string, Row> Table() {
  const Row proxy = Authenticated(404, 404, 403, 403);
  const std::string exec_body =
      R"({"principal":"alice","command":"aevatar-codex-exec v1 --timeout-secs 5","stdin":"x"})";
  std::map<std::string, Row> table = {
      {"POST /api/v1/auth/login", Everyone(400)},
      {"POST /api/v1/auth/logout", Authenticated(204, 204, 403, 403)},
      {"POST /api/v1/auth/password", Authenticated(400, 400, 403, 403)},
      {"POST /api/v1/admin/signing-keys/rotate", Authenticated(403, 403, 403, 403)},
      {"GET /api/v1/admin/audit", Authenticated(403, 403, 403, 403)},
      {"GET /api/v1/me", Authenticated(kOwn, kOwn, 200, 403)},
      {"GET /.well-known/jwks.json", Everyone(200)},
      {"POST /api/v1/tokens/introspect", Authenticated(403, 403, 403, 403)},
      {"POST /api/v1/agent-keys", Authenticated(400, 400, 403, 403)},
      {"GET /api/v1/agent-keys", Authenticated(kOwn, kOwn, 403, 403)},
      {"DELETE /api/v1/agent-keys/{id}", Authenticated(404, 404, 403, 403)},
      {"GET /api/v1/keys", Authenticated(kOwn, kOwn, 200, 403)},
      {"GET /api/v1/user-services", Authenticated(kOwn, kOwn, 200, 403)},
      {"POST /api/v1/user-services", Authenticated(400, 400, 403, 403)},
      {"GET /api/v1/user-services/{id}", Authenticated(404, 404, 200, 403)},
      {"PUT /api/v1/user-services/{id}", Authenticated(404, 404, 403, 403)},
      {"POST /api/v1/services/{id}/resync-identity", Authenticated(403, 403, 403, 403)},
      {"GET /api/v1/catalog", Authenticated(200, 200, 200, 403)},
      {"POST /api/v1/nodes/register-token", Authenticated(400, 400, 403, 403)},
      {"POST /api/v1/nodes/register", Everyone(401)},
      {"GET /api/v1/nodes", Authenticated(kOwn, kOwn, 200, 403)},
      {"DELETE /api/v1/nodes/{id}", Authenticated(404, 404, 403, 403)},
      {"GET /api/v1/nodes/ws", Everyone(401)},
      {"POST /api/v1/ssh-services", Authenticated(400, 400, 403, 403)},
      {"POST /api/v1/ssh/{service}/exec", Authenticated(404, 404, 403, 403, exec_body)},
      {"GET /healthz", Everyone(200)},
      {"GET /readyz", Everyone(200)},
      // The matrix calls from a non-loopback address and no metrics token is set.
      {"GET /metrics", Everyone(403)},
      {"GET /openapi.json", Everyone(200)},
  };
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    table[std::string(method) + " /api/v1/proxy/{slug}/{path...}"] = proxy;
  }
  return table;
}

TEST_F(NyxidRouteMatrix, EveryRouteAnswersEachAttackerAsTheTableSays) {
  testing::MatrixSubject subject;
  subject.router = router_.get();
  subject.path_of = [this](const std::string& pattern) { return PathOf(pattern); };
  subject.present = [this](Attacker attacker, http::Request& request) {
    const std::string credential = Credential(attacker);
    if (!credential.empty()) request.headers.Set("Authorization", "Bearer " + credential);
  };
  subject.victim_ids = alice_ids_;
  testing::RunRouteMatrix(subject, Table());
}

// The router (nodes on: every route) and its OpenAPI document
// (src/nyxid/api/openapi/) name the same operations, both ways, and
// openapi-spec-validator accepts the document.
TEST_F(NyxidRouteMatrix, OpenApiDocumentCoversEveryRouteAndNothingElse) {
  testing::ExpectOpenApiMatchesRouter(*router_, OpenApiFragments(), "src/nyxid/api/openapi/");
}

TEST(NyxidOpenApi, DocumentPassesOpenApiSpecValidator) {
  testing::ExpectOpenApiSpecValid(OpenApiFragments());
}

// The SSH route reaches a user's own host: only the user's access token or a
// key made for that service alone gets past the credential check (here to
// NODE_OFFLINE: no node is connected); what sandboxed code may hold does not.
TEST_F(NyxidRouteMatrix, SshServicesTakeHumansAndKeysMadeForThemOnly) {
  auto exec = [&](const std::string& credential) {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/api/v1/ssh/box/exec";
    request.body =
        R"({"principal":"alice","command":"aevatar-codex-exec v1 --timeout-secs 5","stdin":"x"})";
    request.headers.Set("Authorization", "Bearer " + credential);
    const http::Response response = router_->Handle(request);
    return json::parse(response.body, nullptr, false).value("code", "");
  };
  auto key = [&](std::vector<std::string> allowed) {
    NewAgentKey made = GenerateAgentKey(alice_.id, "k", std::move(allowed), base::NowUnixMs());
    EXPECT_TRUE(store_->InsertAgentKey(made.record).ok());
    return made.secret;
  };
  EXPECT_EQ(exec(tokens_->IssueAccess(alice_.id, alice_.username)), "NODE_OFFLINE");
  EXPECT_EQ(exec(key({"box"})), "NODE_OFFLINE");
  EXPECT_EQ(exec(key({})), "SSH_CREDENTIAL_NOT_ALLOWED");  // an unrestricted key
  EXPECT_EQ(exec(tokens_->MintDelegation(alice_.id, "chrono-sandbox", {"proxy:*"})),
            "SSH_CREDENTIAL_NOT_ALLOWED");
}

}  // namespace
}  // namespace aevatar::nyxid
