// aevatar's interactive code_execute through the three real binaries:
// route resolution, convergence, credential kinds and bad input.

#include <algorithm>

#include "aevatar_stack.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

constexpr char kUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
  - {username: carol, password: pw-carol}
  - {username: dave, password: pw-dave}
  - {username: erin, password: pw-erin}
  - {username: frank, password: pw-frank}
  - {username: bob, password: pw-bob}
  - {username: gina, password: pw-gina}
  - {username: henry, password: pw-henry}
orgs:
  - slug: acme
    members: [{username: bob, role: member}]
  - slug: beta
    members: [{username: gina, role: member}]
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - owner: {user: carol}
    catalog_service_id: chrono-sandbox
    forward_access_token: false
    delegation_token_scope: 'extra:scope proxy:*'
  - {owner: {user: erin}, catalog_service_id: chrono-sandbox, active: false}
  - {owner: {user: frank}, slug: chrono-sandbox, base_url: 'http://127.0.0.1:9'}
  - {owner: {org: acme}, catalog_service_id: chrono-sandbox, credential_source: {allowed: false}}
  - {owner: {user: gina}, catalog_service_id: chrono-sandbox}
  - {owner: {org: beta}, catalog_service_id: chrono-sandbox, credential_source: {allowed: true}}
  - owner: {user: henry}
    catalog_service_id: chrono-sandbox
    inject_delegation_token: false
)yaml";

class AevatarCodeExecute : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { stack_ = new AevatarStack(kUsers); }
  static void TearDownTestSuite() { delete stack_; }
  void SetUp() override { ASSERT_TRUE(stack_->ok()); }
  static AevatarStack& s() { return *stack_; }
  static AevatarStack* stack_;
};
AevatarStack* AevatarCodeExecute::stack_ = nullptr;

size_t LineCount(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// Harmless requests each service answers with a problem (no credentials), for
// ServiceProcess::WaitForSentinel.
constexpr char kAevatarSentinel[] = "/api/tools";
constexpr char kNyxidSentinel[] = "/api/v1/me";
constexpr char kChronoSentinel[] = "/executions/op_sentinel";

TEST_F(AevatarCodeExecute, AllFourLanguagesRunEndToEnd) {
  const std::string token = s().Login("alice");
  ASSERT_FALSE(token.empty());
  struct Case {
    const char* language;
    const char* source;
    const char* expected;
  };
  for (const Case& c : {Case{"python", "print(2 + 3)", "5\n"},
                        Case{"javascript", "console.log([1, 2].length)", "2\n"},
                        Case{"typescript", "const n: number = 7; console.log(n)", "7\n"},
                        Case{"bash", "echo $((6 * 7))", "42\n"}}) {
    auto r = s().Execute(token, {{"language", c.language}, {"source", c.source}});
    ASSERT_EQ(r.status, 200) << c.language << ": " << r.body;
    nlohmann::json body = JsonOf(r);
    EXPECT_EQ(body["stdout"], c.expected) << c.language;
    EXPECT_EQ(body["exit_code"], 0);
    EXPECT_EQ(body["verdict"], "ok");
    EXPECT_FALSE(body.value("diagnostic_id", "").empty());
  }
  auto failing = s().Execute(token, {{"language", "bash"}, {"source", "echo oops >&2; exit 5"}});
  ASSERT_EQ(failing.status, 200);
  EXPECT_EQ(JsonOf(failing)["exit_code"], 5);
  EXPECT_EQ(JsonOf(failing)["stderr"], "oops\n");
}

TEST_F(AevatarCodeExecute, AgentKeyProgramSeesNyxidEnvAndHumanProgramDoesNot) {
  const std::string token = s().Login("alice");
  nlohmann::json created = s().nyxid().CreateAgentKey(token, "aevatar-e2e");
  const std::string key = created.value("key", "");
  ASSERT_EQ(key.rfind("nyxid_ag_", 0), 0u) << created.dump();
  const nlohmann::json probe = {{"language", "bash"},
                                {"source",
                                 "echo \"key=${NYXID_API_KEY:+set} url=${NYXID_BASE_URL:-none}\"; "
                                 "[ \"$NYXID_API_KEY\" = \"$EXPECT\" ] && echo match"},
                                {"env", {{"EXPECT", key}}}};
  auto as_agent = s().Execute(key, probe);
  ASSERT_EQ(as_agent.status, 200) << as_agent.body;
  EXPECT_EQ(JsonOf(as_agent)["stdout"], "key=set url=" + s().nyxid().url() + "\nmatch\n");
  auto as_human = s().Execute(token, probe);
  ASSERT_EQ(as_human.status, 200) << as_human.body;
  EXPECT_EQ(JsonOf(as_human)["stdout"], "key= url=none\n");
}

// An Agent Key restricted to some services runs code_execute only on the
// chrono-sandbox route its allowed_services name (by id or slug): NyxID's
// proxy refuses it anywhere else. It is an execution credential, so the
// read-only readiness (an inventory read) is refused by aevatar itself.
TEST_F(AevatarCodeExecute, ARestrictedKeyRunsOnlyOnTheRouteItNamesAndReadsNoReadiness) {
  const std::string token = s().Login("alice");
  const std::string route_id = s().nyxid().KeyBySlug(token, "chrono-sandbox").value("id", "");
  ASSERT_FALSE(route_id.empty());
  const nlohmann::json probe = {{"language", "bash"}, {"source", "echo restricted-ran"}};
  for (const std::string& allowed : {route_id, std::string("chrono-sandbox")}) {
    const std::string key =
        s().nyxid().CreateAgentKey(token, "for-chrono", {allowed}).value("key", "");
    ASSERT_FALSE(key.empty());
    auto ran = s().Execute(key, probe);
    ASSERT_EQ(ran.status, 200) << ran.body;
    EXPECT_EQ(JsonOf(ran)["stdout"], "restricted-ran\n");
    ExpectProblem(s().Aevatar("GET", "/api/capabilities/code_execute/readiness", key), 403,
                  "AGENT_KEY_RESTRICTED");
  }
  const std::string elsewhere =
      s().nyxid().CreateAgentKey(token, "elsewhere", {"some-other-service"}).value("key", "");
  ASSERT_FALSE(elsewhere.empty());
  ExpectProblem(s().Execute(elsewhere, probe), 403, "AGENT_KEY_SERVICE_NOT_ALLOWED");
}

TEST_F(AevatarCodeExecute, InvalidInputFailsBeforeAnyNetworkCall) {
  const std::string token = s().Login("alice");
  // Warm up the JWKS cache so authentication itself needs no call.
  ASSERT_EQ(s().Aevatar("GET", "/api/tools", token).status, 200);
  // Each log is complete up to a sentinel line; exactly one more (the next
  // sentinel's) may follow the calls under test.
  ASSERT_TRUE(s().nyxid().service().WaitForSentinel(kNyxidSentinel));
  ASSERT_TRUE(s().chrono().WaitForSentinel(kChronoSentinel));
  const size_t nyxid_lines = LineCount(s().nyxid().service().ReadLog());
  const size_t chrono_lines = LineCount(s().chrono().ReadLog());
  for (const nlohmann::json& bad :
       {nlohmann::json{{"language", "cobol"}, {"source", "x"}},
        nlohmann::json{{"language", "bash"}},
        nlohmann::json{{"language", "bash"}, {"source", "true"}, {"timeout_secs", 0}},
        nlohmann::json{{"language", "bash"}, {"source", "true"}, {"timeout_secs", 601}},
        nlohmann::json{
            {"language", "bash"}, {"source", "true"}, {"env", {{"NYXID_API_KEY", "x"}}}}}) {
    auto r = s().Execute(token, bad);
    EXPECT_EQ(r.status, 400) << bad.dump() << " -> " << r.body;
    EXPECT_FALSE(JsonOf(r).value("diagnostic_id", "").empty());
  }
  EXPECT_EQ(s().Aevatar("POST", "/api/tools/code_execute", token, "{nope").status, 400);
  ASSERT_TRUE(s().nyxid().service().WaitForSentinel(kNyxidSentinel));
  ASSERT_TRUE(s().chrono().WaitForSentinel(kChronoSentinel));
  EXPECT_EQ(LineCount(s().nyxid().service().ReadLog()), nyxid_lines + 1) << "nyxid was called";
  EXPECT_EQ(LineCount(s().chrono().ReadLog()), chrono_lines + 1) << "chrono was called";
}

TEST_F(AevatarCodeExecute, HumanCallConvergesAMismatchedPersonalRoute) {
  const std::string token = s().Login("carol");
  nlohmann::json before = s().nyxid().KeyBySlug(token, "chrono-sandbox");
  ASSERT_EQ(before["forward_access_token"], false);
  auto r = s().Execute(token, {{"language", "python"}, {"source", "print('converged')"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonOf(r)["stdout"], "converged\n");
  nlohmann::json after = s().nyxid().KeyBySlug(token, "chrono-sandbox");
  EXPECT_EQ(after["id"], before["id"]);
  EXPECT_EQ(after["forward_access_token"], true);
  EXPECT_EQ(after["inject_delegation_token"], true);
  const std::string scopes = after["delegation_token_scope"];
  for (const char* scope : {"proxy:*", "sandbox:execute", "extra:scope"}) {
    EXPECT_NE(scopes.find(scope), std::string::npos) << scopes;
  }
}

TEST_F(AevatarCodeExecute, AgentKeyAndReadinessNeverWrite) {
  const std::string token = s().Login("henry");
  const nlohmann::json before = s().nyxid().KeyBySlug(token, "chrono-sandbox");
  ASSERT_EQ(before["inject_delegation_token"], false);
  auto readiness = s().Aevatar("GET", "/api/capabilities/code_execute/readiness", token);
  ASSERT_EQ(readiness.status, 200);
  EXPECT_EQ(JsonOf(readiness)["ready"], false);
  EXPECT_EQ(JsonOf(readiness)["code"], "CODE_EXECUTION_ROUTE_POLICY_MISMATCH");
  const std::string key = s().nyxid().CreateAgentKey(token, "henry-key").value("key", "");
  ASSERT_FALSE(key.empty());
  auto r = s().Execute(key, {{"language", "bash"}, {"source", "echo hi"}});
  ExpectProblem(r, 409, "CODE_EXECUTION_ROUTE_POLICY_MISMATCH");
  EXPECT_NE(JsonOf(r).value("detail", "").find("inject_delegation_token"), std::string::npos);
  EXPECT_FALSE(JsonOf(r).value("remediation", "").empty());
  const nlohmann::json after = s().nyxid().KeyBySlug(token, "chrono-sandbox");
  EXPECT_EQ(after["inject_delegation_token"], false);
  EXPECT_EQ(after["updated_at_ms"], before["updated_at_ms"]);
}

TEST_F(AevatarCodeExecute, ReadinessNamesEachTypedBlocker) {
  struct Case {
    const char* user;
    const char* code;
  };
  for (const Case& c : {Case{"alice", "READY"}, Case{"dave", "CODE_EXECUTION_ROUTE_MISSING"},
                        Case{"frank", "CODE_EXECUTION_ROUTE_MISSING"},
                        Case{"erin", "CODE_EXECUTION_ROUTE_INACTIVE"},
                        Case{"bob", "CODE_EXECUTION_ROUTE_ACCESS_DENIED"},
                        Case{"gina", "CODE_EXECUTION_ROUTE_AMBIGUOUS"}}) {
    const std::string token = s().Login(c.user);
    ASSERT_FALSE(token.empty()) << c.user;
    auto r = s().Aevatar("GET", "/api/capabilities/code_execute/readiness", token);
    ASSERT_EQ(r.status, 200) << c.user << ": " << r.body;
    nlohmann::json body = JsonOf(r);
    EXPECT_EQ(body["code"], c.code) << c.user;
    EXPECT_EQ(body["ready"], std::string(c.code) == "READY") << c.user;
    EXPECT_FALSE(body.value("diagnostic_id", "").empty());
  }
  auto denied = s().Execute(s().Login("bob"), {{"language", "bash"}, {"source", "true"}});
  ExpectProblem(denied, 403, "CODE_EXECUTION_ROUTE_ACCESS_DENIED");
}

TEST_F(AevatarCodeExecute, UnauthenticatedCallsAreRejected) {
  ExpectProblem(s().Aevatar("GET", "/api/tools", ""), 401, "CREDENTIAL_MISSING");
  ExpectProblem(s().Execute("nyxid_ag_notarealkey", {{"language", "bash"}, {"source", "true"}}),
                401, "AGENT_KEY_INACTIVE");
  ExpectProblem(s().Aevatar("GET", "/api/tools", "eyJhbGciOiJub25lIn0.e30."), 401,
                "TOKEN_ALGORITHM_REJECTED");
}

TEST_F(AevatarCodeExecute, PlantedSecretsStayOutOfAevatarsLog) {
  const std::string token = s().Login("alice");
  const std::string key = s().nyxid().CreateAgentKey(token, "planted").value("key", "");
  const std::string marker = "SOURCE_MARKER_" + base::HexEncode(base::RandomBytes(6));
  s().Execute(token, {{"language", "bash"}, {"source", "# " + marker + "\ntrue"}});
  s().Execute(key, {{"language", "bash"}, {"source", "# " + marker + "\nexit 3"}});
  s().Execute(token, {{"language", "nope"}, {"source", marker}});
  ASSERT_TRUE(s().aevatar().WaitForSentinel(kAevatarSentinel));  // absent, not late
  const std::string log = s().aevatar().ReadLog();
  ASSERT_FALSE(log.empty());
  for (const std::string& secret : {token, key, marker, std::string("pw-alice")}) {
    EXPECT_EQ(log.find(secret), std::string::npos);
  }
  const std::string route_id = s().nyxid().KeyBySlug(token, "chrono-sandbox").value("id", "");
  ASSERT_FALSE(route_id.empty());
  EXPECT_EQ(log.find(route_id), std::string::npos) << "route id in aevatar's log";
}

}  // namespace
}  // namespace aevatar::testing
