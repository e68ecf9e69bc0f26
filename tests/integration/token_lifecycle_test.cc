// Key and token lifecycle through the three real binaries: logout and a
// password change revoke the account's tokens (at NyxID at once, at aevatar
// within its introspection bound, kIntrospectionCache); a revoked Agent Key
// stops at aevatar within the same bound; a signing-key rotation keeps the
// tokens the old key signed and is picked up by aevatar and chrono-sandbox
// on the first token of the new key; each of these admin actions is in the
// append-only admin audit log, which holds no secret.
#include <set>
#include <thread>

#include "aevatar_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kLifecycleUsers[] = R"yaml(
users:
  - {username: root, password: pw-root, platform_admin: true}
  - {username: alice, password: pw-alice}
  - {username: bob, password: pw-bob}
  - {username: carol, password: pw-carol}
  - {username: dora, password: pw-dora}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - {owner: {user: carol}, catalog_service_id: chrono-sandbox}
)yaml";

// How long a revocation may take to reach aevatar: its introspection cache
// (5 s) plus room for a slow machine.
constexpr auto kRevocationBound = std::chrono::seconds(15);

class TokenLifecycleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { stack_ = new AevatarStack(kLifecycleUsers); }
  static void TearDownTestSuite() { delete stack_; }
  void SetUp() override { ASSERT_TRUE(stack_->ok()); }
  static AevatarStack& s() { return *stack_; }

  static int AtNyxid(const std::string& token) {
    return s().nyxid().Call("GET", "/api/v1/me", token).status;
  }
  static int AtAevatar(const std::string& token) {
    return s().Aevatar("GET", "/api/approvals", token).status;
  }
  // Polls aevatar until it refuses `token`; the refusal's code, or "" when
  // it never came within the bound.
  static std::string RefusedAtAevatar(const std::string& token) {
    const auto until = std::chrono::steady_clock::now() + kRevocationBound;
    while (std::chrono::steady_clock::now() < until) {
      const http::ClientResponse response = s().Aevatar("GET", "/api/approvals", token);
      if (response.status == 401) return JsonOf(response).value("code", "");
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return "";
  }
  static AevatarStack* stack_;
};
AevatarStack* TokenLifecycleTest::stack_ = nullptr;

TEST_F(TokenLifecycleTest, LogoutRevokesEveryTokenOfTheAccount) {
  const std::string first = s().Login("alice");
  const std::string second = s().Login("alice");
  ASSERT_EQ(AtNyxid(first), 200);
  ASSERT_EQ(AtAevatar(first), 200);
  ASSERT_EQ(s().nyxid().Call("POST", "/api/v1/auth/logout", first).status, 204);
  for (const std::string& token : {first, second}) {
    const http::ClientResponse me = s().nyxid().Call("GET", "/api/v1/me", token);
    EXPECT_EQ(me.status, 401);
    EXPECT_EQ(JsonOf(me).value("code", ""), "TOKEN_REVOKED");
    EXPECT_EQ(RefusedAtAevatar(token), "TOKEN_REVOKED");
  }
  // Another account is untouched; a new login works everywhere.
  EXPECT_EQ(AtAevatar(s().Login("bob")), 200);
  const std::string fresh = s().Login("alice");
  EXPECT_EQ(AtNyxid(fresh), 200);
  EXPECT_EQ(AtAevatar(fresh), 200);
}

TEST_F(TokenLifecycleTest, APasswordChangeRevokesTokensAndRetiresTheOldPassword) {
  const std::string token = s().Login("carol");
  ASSERT_EQ(AtAevatar(token), 200);
  auto change = [&](const std::string& current, const std::string& next) {
    return s().nyxid().Call("POST", "/api/v1/auth/password", token,
                            json{{"current_password", current}, {"new_password", next}}.dump());
  };
  EXPECT_EQ(JsonOf(change("wrong", "a new long password")).value("code", ""), "PASSWORD_WRONG");
  EXPECT_EQ(JsonOf(change("pw-carol", "short")).value("code", ""), "PASSWORD_TOO_WEAK");
  ASSERT_EQ(change("pw-carol", "a new long password").status, 204);
  EXPECT_EQ(AtNyxid(token), 401);
  EXPECT_EQ(RefusedAtAevatar(token), "TOKEN_REVOKED");
  EXPECT_TRUE(s().nyxid().Login("carol", "pw-carol").empty());
  const std::string fresh = s().nyxid().Login("carol", "a new long password");
  ASSERT_FALSE(fresh.empty());
  EXPECT_EQ(AtAevatar(fresh), 200);
  // Its code_execute route still works with the new session.
  const http::ClientResponse run =
      s().Execute(fresh, {{"language", "bash"}, {"source", "echo after-change"}});
  EXPECT_EQ(run.status, 200) << run.body;
}

TEST_F(TokenLifecycleTest, ARevokedAgentKeyStopsAtAevatarWithinTheBound) {
  const std::string human = s().Login("bob");
  const json created = s().nyxid().CreateAgentKey(human, "lifecycle");
  const std::string key = created.value("key", "");
  ASSERT_FALSE(key.empty()) << created.dump();
  ASSERT_EQ(AtAevatar(key), 200);
  ASSERT_EQ(
      s().nyxid().Call("DELETE", "/api/v1/agent-keys/" + created.value("id", ""), human).status,
      204);
  EXPECT_EQ(RefusedAtAevatar(key), "AGENT_KEY_INACTIVE");
}

TEST_F(TokenLifecycleTest, ARotationKeepsOldTokensAndTheNewKeyIsTrustedEverywhere) {
  const std::string before = s().Login("alice");
  ASSERT_EQ(AtAevatar(before), 200);
  EXPECT_EQ(JsonOf(s().nyxid().Call("POST", "/api/v1/admin/signing-keys/rotate", before))
                .value("code", ""),
            "PLATFORM_ADMIN_REQUIRED");
  const http::ClientResponse rotated =
      s().nyxid().Call("POST", "/api/v1/admin/signing-keys/rotate", s().Login("root"));
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const json kids = JsonOf(rotated);
  ASSERT_NE(kids.value("kid", ""), kids.value("previous_kid", ""));
  const json jwks = JsonOf(s().nyxid().Call("GET", "/.well-known/jwks.json", ""));
  std::set<std::string> published;
  for (const json& key : jwks.value("keys", json::array())) published.insert(key.value("kid", ""));
  EXPECT_TRUE(published.count(kids.value("kid", "")) &&
              published.count(kids.value("previous_kid", "")));
  // The old key's token still works; a token of the new key works at aevatar,
  // and so does the delegation token NyxID now mints for chrono-sandbox.
  EXPECT_EQ(AtNyxid(before), 200);
  EXPECT_EQ(AtAevatar(before), 200);
  const std::string after = s().Login("alice");
  EXPECT_EQ(AtAevatar(after), 200);
  const http::ClientResponse run =
      s().Execute(after, {{"language", "bash"}, {"source", "echo rotated"}});
  EXPECT_EQ(run.status, 200) << run.body;
  EXPECT_EQ(JsonOf(run).value("stdout", ""), "rotated\n") << run.body;
}

TEST_F(TokenLifecycleTest, AdminActionsAreAuditedForAdminsOnlyAndHoldNoSecret) {
  // Each kind of action once, here (each test may run in its own process).
  const std::string dora = s().Login("dora");
  const json key = s().nyxid().CreateAgentKey(dora, "audited");
  ASSERT_EQ(s().nyxid().Call("DELETE", "/api/v1/agent-keys/" + key.value("id", ""), dora).status,
            204);
  ASSERT_EQ(
      s().nyxid()
          .Call(
              "POST", "/api/v1/auth/password", dora,
              json{{"current_password", "pw-dora"}, {"new_password", "dora's new password"}}.dump())
          .status,
      204);
  const std::string again = s().nyxid().Login("dora", "dora's new password");
  ASSERT_EQ(s().nyxid().Call("POST", "/api/v1/auth/logout", again).status, 204);
  const std::string root = s().Login("root");
  ASSERT_EQ(s().nyxid().Call("POST", "/api/v1/admin/signing-keys/rotate", root).status, 200);

  EXPECT_EQ(s().nyxid().Call("GET", "/api/v1/admin/audit", s().Login("bob")).status, 403);
  const json page = JsonOf(s().nyxid().Call("GET", "/api/v1/admin/audit?limit=1000", root));
  ASSERT_TRUE(page.contains("entries") && page["entries"].is_array()) << page.dump();
  std::multiset<std::string> actions;
  for (const json& entry : page["entries"]) {
    actions.insert(entry.value("action", ""));
    EXPECT_FALSE(entry.value("actor", "").empty());
  }
  // The bootstrap's accounts and routes, and the actions above.
  EXPECT_GE(actions.count("account.created"), 5u);
  EXPECT_GE(actions.count("route.created"), 2u);
  for (const char* action : {"account.logged_out", "account.password_changed", "agent_key.created",
                             "agent_key.revoked", "signing_key.rotated"}) {
    EXPECT_GE(actions.count(action), 1u) << action;
  }
  const std::string text = page.dump();
  for (const std::string& secret :
       {std::string("pw-dora"), std::string("dora's new password"), key.value("key", "x"),
        std::string("nyxid_ag_"), std::string("eyJ")}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
  }
  // Continuing after the last entry reads nothing new.
  const json rest = JsonOf(s().nyxid().Call(
      "GET", "/api/v1/admin/audit?after=" + std::to_string(page.value("next_after", 0)), root));
  EXPECT_TRUE(rest.contains("entries") && rest["entries"].empty()) << rest.dump();
}

}  // namespace
}  // namespace aevatar::testing
