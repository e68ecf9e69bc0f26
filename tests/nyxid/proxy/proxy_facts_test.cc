// The proxy serves its reads of the caller's account, Agent Key, route and
// catalog service from memory while the facts generation holds
// (store/cached_facts.h). What that must never do: let a request through on
// a row that changed, whichever connection to the database changed it (here
// a second one, as another process or the CLI would hold).
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "http/server.h"
#include "http_test_util.h"
#include "nlohmann/json.hpp"
#include "nyxid/api/http_api.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "nyxid/tokens/agent_keys.h"

namespace aevatar::nyxid {
namespace {

class ProxyFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upstream_ = http::testing::StartOrDie([](http::Request&) {
      http::Response response;
      response.body = "from the upstream";
      return response;
    });
    char tmpl[] = "/tmp/nyxid_proxy_facts.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const std::string at_rest_key = base::RandomBytes(32);
    auto store = OpenSqliteNyxidStore(dir_ + "/nyxid.db", at_rest_key);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto other = OpenSqliteNyxidStore(dir_ + "/nyxid.db", at_rest_key);
    ASSERT_TRUE(other.ok()) << other.status();
    other_connection_ = std::move(*other);
    auto keys = KeyRing::LoadOrCreate(dir_, base::NowUnixSecs(), 3900);
    ASSERT_TRUE(keys.ok()) << keys.status();
    keys_ = std::move(*keys);
    tokens_ = std::make_unique<TokenService>(keys_.get(), "nyxid", base::NowUnixSecs);
    auth_ = std::make_unique<Authenticator>(store_.get(), tokens_.get());
    auto spec = ParseBootstrap(absl::StrCat(R"yaml(
users:
  - {username: alice, password: alice-password-1}
catalog:
  - id: cat_echo
    slug: echo
    base_url: "http://127.0.0.1:)yaml",
                                            upstream_->port(), R"yaml("
    default_policy: {forward_access_token: false, inject_delegation_token: false}
user_services:
  - {owner: {user: alice}, catalog_service_id: cat_echo}
)yaml"));
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_TRUE(ApplyBootstrap(*spec, *store_, base::NowUnixMs()).ok());
    HttpApiDeps deps;
    deps.store = store_.get();
    deps.keys = keys_.get();
    deps.tokens = tokens_.get();
    deps.auth = auth_.get();
    router_ = BuildHttpApi(deps);

    auto alice = store_->FindUserByName("alice");
    ASSERT_TRUE(alice.ok()) << alice.status();
    alice_id_ = alice->id;
    auto route = store_->FindUserServiceBySlug({OwnerKind::kUser, alice_id_}, "echo");
    ASSERT_TRUE(route.ok()) << route.status();
    route_id_ = route->id;
    NewAgentKey key = GenerateAgentKey(alice_id_, "agent", {}, base::NowUnixMs());
    ASSERT_TRUE(store_->InsertAgentKey(key.record).ok());
    key_ = key.secret;
    key_id_ = key.record.id;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A proxied GET as `bearer`: the status and, for a refusal, its code.
  std::pair<int, std::string> Proxy(const std::string& bearer) {
    http::Request request;
    request.method = "GET";
    request.path = "/api/v1/proxy/echo/hello";
    request.query = "_nyxid_via=" + route_id_;
    request.target = request.path + "?" + request.query;
    request.remote_address = "127.0.0.1";
    request.headers.Set("Authorization", "Bearer " + bearer);
    const http::Response response = router_->Handle(request);
    if (response.status == 200) {
      EXPECT_EQ(response.body, "from the upstream");
      return {200, ""};
    }
    return {response.status,
            nlohmann::json::parse(response.body, nullptr, false).value("code", "")};
  }

  // alice's route as it is now, active or not, through the other connection.
  void SetRouteActive(bool active) {
    auto route = other_connection_->FindUserService(route_id_);
    ASSERT_TRUE(route.ok()) << route.status();
    route->active = active;
    ASSERT_TRUE(other_connection_->UpdateUserService(*route).ok());
  }

  std::unique_ptr<http::Server> upstream_;
  std::string dir_;
  std::unique_ptr<NyxidStore> store_;
  std::unique_ptr<NyxidStore> other_connection_;
  std::unique_ptr<KeyRing> keys_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<http::Router> router_;
  std::string alice_id_;
  std::string route_id_;
  std::string key_;
  std::string key_id_;
};

using Answer = std::pair<int, std::string>;

TEST_F(ProxyFactsTest, AnUnchangedStoreKeepsAnsweringAndEveryChangeReachesTheNextRequest) {
  EXPECT_EQ(Proxy(key_), Answer(200, ""));
  EXPECT_EQ(Proxy(key_), Answer(200, ""));  // the same rows, now from memory

  SetRouteActive(false);
  EXPECT_EQ(Proxy(key_), Answer(403, "ROUTE_INACTIVE"));
  SetRouteActive(true);
  EXPECT_EQ(Proxy(key_), Answer(200, ""));

  const std::string token = tokens_->IssueAccess(alice_id_, "alice");
  EXPECT_EQ(Proxy(token), Answer(200, ""));
  auto alice = other_connection_->FindUserById(alice_id_);
  ASSERT_TRUE(alice.ok()) << alice.status();
  alice->tokens_not_before_ms = base::NowUnixMs() + 1000;  // as a logout does
  ASSERT_TRUE(other_connection_->UpdateUser(*alice).ok());
  EXPECT_EQ(Proxy(token), Answer(401, "TOKEN_REVOKED"));

  ASSERT_TRUE(other_connection_->RevokeAgentKey(alice_id_, key_id_, base::NowUnixMs()).ok());
  EXPECT_EQ(Proxy(key_), Answer(401, "AGENT_KEY_REVOKED"));
}

}  // namespace
}  // namespace aevatar::nyxid
