// Credential kinds over real HTTP: forged, stale and revoked credentials are
// typed 401s; a delegation token cannot mint another; an Agent Key cannot
// create Agent Keys; introspection; the proxy's deadline and 502.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "gtest/gtest.h"
#include "nyxid_fixture.h"
#include "test_issuer.h"
#include "testing/poll.h"

namespace aevatar::testing {
namespace {

constexpr char kClientSecret[] = "registered-client-secret-for-tests";

// A listener that accepts connections and never answers.
class SilentUpstream {
 public:
  SilentUpstream() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentUpstream() { ::close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

std::string Bootstrap(uint16_t self_port, uint16_t silent_port, uint16_t closed_port) {
  const std::string self = "http://127.0.0.1:" + std::to_string(self_port);
  return R"yaml(
users:
  - {username: alice, password: alice-password-1}
  - {username: root, password: root-password-1, platform_admin: true}
catalog:
  - {id: cat_self, slug: self, base_url: )yaml" +
         self + R"yaml(}
  - {id: cat_inject, slug: self-inject, base_url: )yaml" +
         self + R"yaml(,
     default_policy: {forward_access_token: true, inject_delegation_token: true,
                      delegation_token_scope: "proxy:* sandbox:execute"}}
  - {id: cat_silent, slug: silent, base_url: "http://127.0.0.1:)yaml" +
         std::to_string(silent_port) + R"yaml("}
  - {id: cat_closed, slug: closed, base_url: "http://127.0.0.1:)yaml" +
         std::to_string(closed_port) + R"yaml("}
user_services:
  - {owner: {user: alice}, catalog_service_id: cat_self, slug: self}
  - {owner: {user: alice}, catalog_service_id: cat_self, slug: self-other}
  - {owner: {user: alice}, catalog_service_id: cat_inject, slug: self-inject}
  - {owner: {user: alice}, catalog_service_id: cat_silent, slug: silent}
  - {owner: {user: alice}, catalog_service_id: cat_closed, slug: closed}
clients:
  - {name: chrono-sandbox, secret_sha256: )yaml" +
         base::Sha256Hex(kClientSecret) + R"yaml(}
)yaml";
}

struct SigningKey {
  std::string kid;
  std::string secret_key;
};

// The broker's current signing key, read from its state dir as an operator
// could: lets the test sign tokens the broker itself would accept or reject.
SigningKey ReadSigningKey(const std::string& state_dir) {
  std::ifstream in(state_dir + "/signing-keys.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  const nlohmann::json& key = doc["keys"].back();
  return {key["kid"], *base::Base64UrlDecode(key["secret_key"].get<std::string>())};
}

class NyxidTokens : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    silent_ = new SilentUpstream();
    uint16_t port = PickFreePort();
    uint16_t closed = PickFreePort();
    fixture_ = new NyxidFixture(Bootstrap(port, silent_->port(), closed),
                                {"--proxy-timeout-secs", "2"}, port);
    alice_ = fixture_->Login("alice", "alice-password-1");
  }
  static void TearDownTestSuite() {
    delete fixture_;
    delete silent_;
  }
  void SetUp() override {
    ASSERT_TRUE(fixture_->ok()) << fixture_->service().ReadLog();
    ASSERT_FALSE(alice_.empty());
  }
  static NyxidFixture& f() { return *fixture_; }
  static std::string Id(const std::string& slug) {
    return f().KeyBySlug(alice_, slug).value("id", "");
  }
  static std::string AliceId() { return JsonOf(f().Call("GET", "/api/v1/me", alice_))["id"]; }
  static nlohmann::json Claims(const std::string& kind, const std::string& aud,
                               const std::string& scope, int64_t exp_offset = 300) {
    const int64_t now = base::NowUnixSecs();
    return {{"iss", "nyxid"},
            {"sub", AliceId()},
            {"aud", aud},
            {"scope", scope},
            {"token_kind", kind},
            {"iat", now},
            {"exp", now + exp_offset},
            {"jti", base::RandomId("jti_")}};
  }

  static SilentUpstream* silent_;
  static NyxidFixture* fixture_;
  static std::string alice_;
};
SilentUpstream* NyxidTokens::silent_ = nullptr;
NyxidFixture* NyxidTokens::fixture_ = nullptr;
std::string NyxidTokens::alice_;

// Password guessing: after five free failures an account name is locked
// for 1 s, 2 s, 4 s, … (429 with Retry-After, before any hashing), the same
// for an account that exists and one that does not, and the right password
// does not get through a lock; once it passes, it clears the count.
TEST_F(NyxidTokens, RepeatedBadLoginsAreThrottledAlikeForEveryAccountName) {
  const std::string right = R"({"username":"root","password":"root-password-1"})";
  for (const char* name : {"root", "no-such-user"}) {
    const std::string wrong = std::string(R"({"username":")") + name + R"(","password":"guess"})";
    for (int i = 0; i < 6; ++i) {
      ExpectProblem(f().Call("POST", "/api/v1/auth/login", "", wrong), 401, "LOGIN_FAILED");
    }
    // Asked at once: the lock is a second from the sixth attempt's start.
    const http::ClientResponse locked = f().Call("POST", "/api/v1/auth/login", "", wrong);
    ExpectProblem(locked, 429, "LOGIN_THROTTLED");
    EXPECT_EQ(locked.headers.Get("Retry-After").value_or(""), "1") << name;
  }
  // Locked is locked, the right password too: once root's first lock is
  // over, one more failure locks it for 2 s, time for the right password to
  // be refused inside it (a refusal is answered after half of what is left).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ExpectProblem(f().Call("POST", "/api/v1/auth/login", "", R"({"username":"root","password":"x"})"),
                401, "LOGIN_FAILED");
  ExpectProblem(f().Call("POST", "/api/v1/auth/login", "", right), 429, "LOGIN_THROTTLED");
  // Another account name from the same address is not locked by these.
  ExpectProblem(
      f().Call("POST", "/api/v1/auth/login", "", R"({"username":"alice","password":"x"})"), 401,
      "LOGIN_FAILED");
  // Refused attempts do not count: the right password passes once the lock ends.
  EXPECT_TRUE(
      PollUntil([&] { return f().Call("POST", "/api/v1/auth/login", "", right).status == 200; }));
  ExpectProblem(f().Call("POST", "/api/v1/auth/login", "", R"({"username":"root","password":"x"})"),
                401, "LOGIN_FAILED");
}

TEST_F(NyxidTokens, ARegisteredClientCountsLoginsUnderTheAddressItVouchesFor) {
  // aevatar's /ui login: its client secret, and its client's address.
  auto login = [&](const std::string& source, const std::string& name, bool vouched) {
    std::vector<std::pair<std::string, std::string>> headers = {{"X-Forwarded-For", source}};
    return f().Call("POST", "/api/v1/auth/login", vouched ? kClientSecret : "",
                    nlohmann::json{{"username", name}, {"password", "guess"}}.dump(), headers);
  };
  // 20 free failures and one more (21 account names, so no name is locked)
  // lock the address...
  for (int i = 0; i < 21; ++i) {
    ExpectProblem(login("10.9.0.1", "guesser-" + std::to_string(i), true), 401, "LOGIN_FAILED");
  }
  ExpectProblem(login("10.9.0.1", "guesser-next", true), 429, "LOGIN_THROTTLED");
  // ...and only it: another client behind the same service is not locked.
  ExpectProblem(login("10.9.0.2", "someone", true), 401, "LOGIN_FAILED");
  // Without the secret the header names nothing: the peer's own count.
  ExpectProblem(login("10.9.0.1", "unvouched", false), 401, "LOGIN_FAILED");
}

TEST_F(NyxidTokens, LoginFailuresAreTyped) {
  ExpectProblem(
      f().Call("POST", "/api/v1/auth/login", "", R"({"username":"alice","password":"wrong"})"), 401,
      "LOGIN_FAILED");
  ExpectProblem(
      f().Call("POST", "/api/v1/auth/login", "", R"({"username":"nobody","password":"wrong"})"),
      401, "LOGIN_FAILED");
  ExpectProblem(f().Call("POST", "/api/v1/auth/login", "", R"({"username":"alice"})"), 400,
                "LOGIN_INVALID");
}

TEST_F(NyxidTokens, ForgedExpiredAndUnknownKeyTokensAre401) {
  const SigningKey key = ReadSigningKey(f().dir() + "/state");
  const nlohmann::json claims = Claims("access", "nyxid", "account:read");
  // The genuine key signs a valid token: the harness itself is right.
  EXPECT_EQ(f().Call("GET", "/api/v1/me", base::SignJws(claims, key.kid, key.secret_key)).status,
            200);
  base::Ed25519KeyPair other = base::GenerateEd25519KeyPair();
  ExpectProblem(f().Call("GET", "/api/v1/me", base::SignJws(claims, key.kid, other.secret_key)),
                401, "TOKEN_SIGNATURE_INVALID");
  ExpectProblem(f().Call("GET", "/api/v1/me",
                         RawJws({{"alg", "none"}, {"typ", "JWT"}, {"kid", key.kid}}, claims, "")),
                401, "TOKEN_ALGORITHM_REJECTED");
  ExpectProblem(f().Call("GET", "/api/v1/me",
                         RawJws({{"alg", "HS256"}, {"typ", "JWT"}, {"kid", key.kid}}, claims,
                                base::Sha256(key.kid))),
                401, "TOKEN_ALGORITHM_REJECTED");
  ExpectProblem(f().Call("GET", "/api/v1/me",
                         base::SignJws(Claims("access", "nyxid", "account:read", -120), key.kid,
                                       key.secret_key)),
                401, "TOKEN_EXPIRED");
  ExpectProblem(
      f().Call("GET", "/api/v1/me", base::SignJws(claims, "nyx_unknown", other.secret_key)), 401,
      "TOKEN_KEY_UNKNOWN");
  ExpectProblem(f().Call("GET", "/api/v1/me", "garbage"), 401, "TOKEN_MALFORMED");
  ExpectProblem(f().Call("GET", "/api/v1/me", ""), 401, "CREDENTIAL_MISSING");
}

TEST_F(NyxidTokens, AgentKeysAreShownOnceAndRevocable) {
  nlohmann::json created = f().CreateAgentKey(alice_, "ci");
  const std::string key = created.value("key", "");
  ASSERT_EQ(key.rfind("nyxid_ag_", 0), 0u);
  nlohmann::json me = JsonOf(f().Call("GET", "/api/v1/me", key));
  EXPECT_EQ(me["credential_kind"], "AgentKey");
  nlohmann::json listed = JsonOf(f().Call("GET", "/api/v1/agent-keys", alice_));
  ASSERT_FALSE(listed["agent_keys"].empty());
  EXPECT_EQ(listed.dump().find(key), std::string::npos);  // never shown again
  EXPECT_EQ(
      f().Call("DELETE", "/api/v1/agent-keys/" + created["id"].get<std::string>(), alice_).status,
      204);
  ExpectProblem(f().Call("GET", "/api/v1/me", key), 401, "AGENT_KEY_REVOKED");
  ExpectProblem(
      f().Call("GET", "/api/v1/me", "nyxid_ag_" + base::Base64UrlEncode(base::RandomBytes(32))),
      401, "AGENT_KEY_INVALID");
}

// GET /api/v1/keys revalidates with its ETag (the facts digest, quoted):
// 304 and no body while the caller's /me and /keys are what they were; the
// whole answer, with a new tag, once either changed; the credential is
// checked first, so a revoked one is 401 whatever tag it sends.
TEST_F(NyxidTokens, TheInventoryRevalidatesWithItsETagUntilTheFactsChange) {
  const std::string key = f().CreateAgentKey(alice_, "revalidating").value("key", "");
  ASSERT_FALSE(key.empty());
  auto first = f().Call("GET", "/api/v1/keys", key);
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string tag = first.headers.Get("ETag").value_or("");
  EXPECT_EQ(tag, "\"" + first.headers.Get("X-NyxID-Facts-Digest").value_or("?") + "\"");
  auto unchanged = f().Call("GET", "/api/v1/keys", key, "", {{"If-None-Match", tag}});
  EXPECT_EQ(unchanged.status, 304);
  EXPECT_EQ(unchanged.body, "");
  EXPECT_EQ(unchanged.headers.Get("ETag").value_or(""), tag);
  EXPECT_EQ(f().Call("GET", "/api/v1/keys", key, "", {{"If-None-Match", "\"0000\""}}).status, 200);

  const nlohmann::json route = f().KeyBySlug(alice_, "self");
  const std::string self = "/api/v1/user-services/" + route.value("id", "");
  const nlohmann::json label_was = {{"label", route.value("label", "")}};
  ASSERT_EQ(f().Call("PUT", self, alice_, R"({"label":"relabelled"})").status, 200);
  auto changed = f().Call("GET", "/api/v1/keys", key, "", {{"If-None-Match", tag}});
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.body.find("relabelled"), std::string::npos);
  EXPECT_NE(changed.headers.Get("ETag").value_or(tag), tag);
  ASSERT_EQ(f().Call("PUT", self, alice_, label_was.dump()).status, 200);

  const std::string key_id =
      JsonOf(f().Call("GET", "/api/v1/agent-keys", alice_))["agent_keys"].back().value("id", "");
  ASSERT_EQ(f().Call("DELETE", "/api/v1/agent-keys/" + key_id, alice_).status, 204);
  auto revoked = f().Call("GET", "/api/v1/keys", key, "",
                          {{"If-None-Match", changed.headers.Get("ETag").value_or("")}});
  ExpectProblem(revoked, 401, "AGENT_KEY_REVOKED");
}

TEST_F(NyxidTokens, AnAgentKeyCannotCreateAgentKeysOrChangeRoutes) {
  const std::string key = f().CreateAgentKey(alice_, "agent").value("key", "");
  ExpectProblem(f().Call("POST", "/api/v1/agent-keys", key, R"({"label":"child"})"), 403,
                "HUMAN_TOKEN_REQUIRED");
  ExpectProblem(f().Call("PUT", "/api/v1/user-services/" + Id("self"), key, R"({"active":false})"),
                403, "HUMAN_TOKEN_REQUIRED");
  // It may use the proxy, within its allowed services.
  EXPECT_EQ(f().Call("GET", "/api/v1/proxy/self/healthz?_nyxid_via=" + Id("self"), key).status,
            200);
  const std::string narrow = f().CreateAgentKey(alice_, "narrow", {Id("self")}).value("key", "");
  EXPECT_EQ(f().Call("GET", "/api/v1/proxy/self/healthz?_nyxid_via=" + Id("self"), narrow).status,
            200);
  ExpectProblem(
      f().Call("GET", "/api/v1/proxy/self-other/healthz?_nyxid_via=" + Id("self-other"), narrow),
      403, "AGENT_KEY_SERVICE_NOT_ALLOWED");
}

TEST_F(NyxidTokens, ADelegationTokenCannotMintAnother) {
  const SigningKey key = ReadSigningKey(f().dir() + "/state");
  const std::string delegation = base::SignJws(
      Claims("delegation", "chrono-sandbox", "proxy:* sandbox:execute"), key.kid, key.secret_key);
  ExpectProblem(f().Call("GET", "/api/v1/proxy/self-inject/healthz?_nyxid_via=" + Id("self-inject"),
                         delegation),
                403, "DELEGATION_CANNOT_MINT");
  ExpectProblem(f().Call("POST", "/api/v1/agent-keys", delegation, R"({"label":"x"})"), 403,
                "HUMAN_TOKEN_REQUIRED");
  ExpectProblem(f().Call("GET", "/api/v1/keys", delegation), 403, "TOKEN_SCOPE_MISSING");
  // Nor, kept as what it is, may it go where no new token is minted: its
  // audience (chrono-sandbox) is not one this route's service admits.
  ExpectProblem(f().Call("GET", "/api/v1/proxy/self/healthz?_nyxid_via=" + Id("self"), delegation),
                403, "DELEGATION_AUDIENCE_NOT_ALLOWED");
  const std::string reader =
      base::SignJws(Claims("delegation", "aevatar", "account:read"), key.kid, key.secret_key);
  EXPECT_EQ(f().Call("GET", "/api/v1/keys", reader).status, 200);
  ExpectProblem(f().Call("GET", "/api/v1/proxy/self/healthz?_nyxid_via=" + Id("self"), reader), 403,
                "TOKEN_SCOPE_MISSING");
}

TEST_F(NyxidTokens, IntrospectionIsForRegisteredServices) {
  nlohmann::json created = f().CreateAgentKey(alice_, "introspected");
  const std::string body = nlohmann::json{{"token", created["key"]}}.dump();
  auto response = f().Call("POST", "/api/v1/tokens/introspect", kClientSecret, body);
  ASSERT_EQ(response.status, 200) << response.body;
  nlohmann::json info = JsonOf(response);
  EXPECT_EQ(info["active"], true);
  EXPECT_EQ(info["kind"], "AgentKey");
  EXPECT_EQ(info["sub"], AliceId());
  f().Call("DELETE", "/api/v1/agent-keys/" + created["id"].get<std::string>(), alice_);
  EXPECT_EQ(JsonOf(f().Call("POST", "/api/v1/tokens/introspect", kClientSecret, body)),
            nlohmann::json({{"active", false}}));
  ExpectProblem(f().Call("POST", "/api/v1/tokens/introspect", alice_, body), 403,
                "INTROSPECTION_FORBIDDEN");
  ExpectProblem(f().Call("POST", "/api/v1/tokens/introspect", "", body), 401, "CREDENTIAL_MISSING");
  const std::string root = f().Login("root", "root-password-1");
  auto by_admin =
      f().Call("POST", "/api/v1/tokens/introspect", root, nlohmann::json{{"token", alice_}}.dump());
  EXPECT_EQ(JsonOf(by_admin)["kind"], "AccessToken");
}

TEST_F(NyxidTokens, ProxyDeadlineIs504AndAnUnreachableUpstreamIs502) {
  ExpectProblem(f().Call("GET", "/api/v1/proxy/silent/x?_nyxid_via=" + Id("silent"), alice_), 504,
                "PROXY_DEADLINE_EXCEEDED");
  ExpectProblem(f().Call("GET", "/api/v1/proxy/closed/x?_nyxid_via=" + Id("closed"), alice_), 502,
                "UPSTREAM_UNREACHABLE");
}

TEST_F(NyxidTokens, SigningKeyIsPrivateAndPublishedInTheJwks) {
  struct stat st {};
  ASSERT_EQ(::stat((f().dir() + "/state/signing-keys.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto jwks = base::Jwks::Parse(f().Call("GET", "/.well-known/jwks.json", "").body);
  ASSERT_TRUE(jwks.ok());
  EXPECT_NE(jwks->Find(ReadSigningKey(f().dir() + "/state").kid), nullptr);
}

}  // namespace
}  // namespace aevatar::testing
