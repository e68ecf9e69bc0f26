// Fail-closed authentication of the executor, and secrets that must never
// surface in its logs or error bodies.
#include <fstream>

#include "base/crypto.h"
#include "chrono_client.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

class ChronoAuth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new ChronoFixture({"--nyxid-base-url", "http://127.0.0.1:9/nyxid"});
  }
  static void TearDownTestSuite() { delete fixture_; }
  void SetUp() override { ASSERT_TRUE(fixture_->ok()); }
  static ChronoFixture& f() { return *fixture_; }

  http::ClientResponse ExecuteWith(const std::string& token) {
    return f().Call("POST", "/execute", R"({"language":"bash","script":"echo ran"})", "", {},
                    &token);
  }
  void ExpectRejected(const std::string& token, int status, const std::string& code) {
    auto r = ExecuteWith(token);
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(BodyJson(r).value("code", ""), code) << r.body;
    EXPECT_EQ(r.body.find("ran"), std::string::npos);
  }
  static ChronoFixture* fixture_;
};
ChronoFixture* ChronoAuth::fixture_ = nullptr;

TEST_F(ChronoAuth, ValidDelegationTokenRuns) {
  auto r = ExecuteWith(f().issuer().Delegation("alice"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(BodyJson(r)["stdout"], "ran\n");
}

TEST_F(ChronoAuth, MissingTokenIs401) { ExpectRejected("", 401, "DELEGATION_TOKEN_MISSING"); }

TEST_F(ChronoAuth, ForgedTokensAreRejected) {
  nlohmann::json claims = f().issuer().DelegationClaims("alice", "proxy:* sandbox:execute");
  // Expired.
  nlohmann::json expired = claims;
  expired["exp"] = expired["iat"].get<int64_t>() - 3600;
  ExpectRejected(f().issuer().Sign(expired), 401, "TOKEN_EXPIRED");
  // Signed by another key under the same kid.
  TestIssuer impostor(f().issuer().kid());
  ExpectRejected(impostor.Sign(claims), 401, "TOKEN_SIGNATURE_INVALID");
  // Unknown kid.
  TestIssuer stranger("unknown-kid");
  ExpectRejected(stranger.Sign(claims), 401, "TOKEN_KEY_UNKNOWN");
  // Wrong audience.
  nlohmann::json other_aud = claims;
  other_aud["aud"] = "some-other-service";
  ExpectRejected(f().issuer().Sign(other_aud), 401, "TOKEN_AUDIENCE_MISMATCH");
  // alg none and HS256 with the public key as the HMAC secret.
  ExpectRejected(RawJws({{"alg", "none"}, {"kid", f().issuer().kid()}}, claims, ""), 401,
                 "TOKEN_ALGORITHM_REJECTED");
  ExpectRejected(RawJws({{"alg", "HS256"}, {"kid", f().issuer().kid()}}, claims, "mac"), 401,
                 "TOKEN_ALGORITHM_REJECTED");
  // An access token is not a delegation token.
  nlohmann::json access = claims;
  access["token_kind"] = "access";
  ExpectRejected(f().issuer().Sign(access), 401, "TOKEN_KIND_MISMATCH");
  // Tampered claims keep the old signature.
  std::string token = f().issuer().Sign(claims);
  nlohmann::json tampered = claims;
  tampered["sub"] = "mallory";
  size_t dot = token.find('.');
  size_t dot2 = token.find('.', dot + 1);
  std::string forged =
      token.substr(0, dot + 1) + base::Base64UrlEncode(tampered.dump()) + token.substr(dot2);
  ExpectRejected(forged, 401, "TOKEN_SIGNATURE_INVALID");
  ExpectRejected("not-a-token", 401, "TOKEN_MALFORMED");
}

TEST_F(ChronoAuth, MissingScopeIs403) {
  ExpectRejected(f().issuer().Delegation("alice", "proxy:*"), 403, "TOKEN_SCOPE_MISSING");
  auto ok = ExecuteWith(f().issuer().Delegation("alice", "other sandbox:execute proxy:*"));
  EXPECT_EQ(ok.status, 200);
}

TEST_F(ChronoAuth, AgentKeyReachesTheProgramButAnOrdinaryBearerNeverDoes) {
  const std::string script =
      R"({"language":"bash","script":"echo \"[$NYXID_API_KEY][$NYXID_BASE_URL]\""})";
  const std::string agent_key = "nyxid_ag_" + base::Base64UrlEncode(base::RandomBytes(32));
  auto with_key =
      f().Call("POST", "/execute", script, "alice", {{"Authorization", "Bearer " + agent_key}});
  ASSERT_EQ(with_key.status, 200);
  EXPECT_EQ(BodyJson(with_key)["stdout"], "[" + agent_key + "][http://127.0.0.1:9/nyxid]\n");
  auto with_bearer = f().Call("POST", "/execute", script, "alice",
                              {{"Authorization", "Bearer eyJhbGciOiJFZERTQSJ9.human.token"}});
  ASSERT_EQ(with_bearer.status, 200);
  EXPECT_EQ(BodyJson(with_bearer)["stdout"], "[][]\n");
}

TEST_F(ChronoAuth, AgentKeyAlsoReachesDurablePrograms) {
  const std::string agent_key = "nyxid_ag_" + base::Base64UrlEncode(base::RandomBytes(32));
  auto submit = f().Call(
      "POST", "/executions",
      R"({"language":"bash","script":"echo -n \"$NYXID_API_KEY\" | sha256sum"})", "alice",
      {{"Idempotency-Key", "agent-key-durable"}, {"Authorization", "Bearer " + agent_key}});
  ASSERT_EQ(submit.status, 202) << submit.body;
  const std::string id = BodyJson(submit)["operation_id"];
  f().WaitDone(id);
  // The program proves it saw the key by its digest (its own output is stored).
  EXPECT_EQ(BodyJson(f().Call("GET", "/executions/" + id + "/result"))["stdout"],
            base::Sha256Hex(agent_key) + "  -\n");
  // The key was stored sealed, never in the clear.
  std::string db;
  for (const char* name : {"/state/operations.db", "/state/operations.db-wal"}) {
    std::ifstream in(f().dir() + name, std::ios::binary);
    db += std::string(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(db.empty());
  EXPECT_EQ(db.find(agent_key), std::string::npos);
}

TEST_F(ChronoAuth, PlantedSecretsAppearInNoLogLineAndNoErrorBody) {
  const std::string agent_key = "nyxid_ag_PLANTEDKEY" + base::HexEncode(base::RandomBytes(8));
  const std::string source_marker = "SOURCE_MARKER_" + base::HexEncode(base::RandomBytes(8));
  const std::string env_value = "ENV_SECRET_" + base::HexEncode(base::RandomBytes(8));
  const std::string idem_key = "IDEM_SECRET_" + base::HexEncode(base::RandomBytes(8));
  const std::string token = f().issuer().Delegation("alice");
  std::vector<std::string> bodies;
  auto collect = [&](const http::ClientResponse& r) {
    if (r.status >= 400) bodies.push_back(r.body);
  };
  nlohmann::json program = {{"language", "bash"},
                            {"script", "# " + source_marker + "\nexit 1"},
                            {"env", {{"SECRET_ENV", env_value}}}};
  collect(f().Call("POST", "/execute", program.dump(), "alice",
                   {{"Authorization", "Bearer " + agent_key}}, &token));
  collect(f().Call("POST", "/executions", program.dump(), "alice",
                   {{"Idempotency-Key", idem_key}, {"Authorization", "Bearer " + agent_key}},
                   &token));
  nlohmann::json changed = program;
  changed["script"] = "# other " + source_marker;
  collect(f().Call("POST", "/executions", changed.dump(), "alice", {{"Idempotency-Key", idem_key}},
                   &token));  // 409
  nlohmann::json bad_env = program;
  bad_env["env"] = {{"NYXID_API_KEY", env_value}};
  collect(f().Call("POST", "/execute", bad_env.dump(), "alice", {}, &token));  // 400
  nlohmann::json bad_timeout = program;
  bad_timeout["timeout_secs"] = 9999;
  collect(f().Call("POST", "/execute", bad_timeout.dump(), "alice", {}, &token));  // 400
  collect(f().Call("POST", "/execute", "{\"script\": \"" + source_marker, "alice", {}, &token));
  std::string expired_token = f().issuer().Sign([&] {
    nlohmann::json c = f().issuer().DelegationClaims("alice", "sandbox:execute");
    c["exp"] = 1;
    return c;
  }());
  collect(f().Call("POST", "/execute", program.dump(), "alice", {}, &expired_token));
  ASSERT_GE(bodies.size(), 5u);

  // A sentinel request after the ones under test: once its line is in the
  // log, theirs are too, so an absent secret is absent, not late.
  ASSERT_TRUE(f().service().WaitForSentinel("/executions/op_sentinel"));
  const std::string log = f().service().ReadLog();
  ASSERT_FALSE(log.empty());
  for (const std::string& secret :
       {agent_key, source_marker, env_value, idem_key, token, expired_token}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << "secret in log";
    for (const std::string& body : bodies) {
      EXPECT_EQ(body.find(secret), std::string::npos) << "secret in error body: " << body;
    }
  }
}

}  // namespace
}  // namespace aevatar::testing
