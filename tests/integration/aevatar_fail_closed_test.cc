// The spec's fail-closed rules for workflow runs, through the three real
// binaries: saved-plan proof versions per caller kind, no convergence at run
// start, the HumanBearer runtime re-read against the real NyxID (explicit
// deny, inactive route, 401), and delegation-token ingress through NyxID's
// proxy.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "aevatar_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kRouteToAevatar[] = R"yaml(
  - owner: {user: alice}
    slug: aevatar
    base_url: 'http://127.0.0.1:PORT'
    forward_access_token: false
    inject_delegation_token: true
    delegation_token_scope: 'account:read proxy:*'
  - owner: {user: nora}
    slug: aevatar
    base_url: 'http://127.0.0.1:PORT'
    forward_access_token: false
    inject_delegation_token: true
    delegation_token_scope: 'proxy:*'
)yaml";

std::string Users(uint16_t aevatar_port) {
  std::string routes = kRouteToAevatar;
  for (size_t at = routes.find("PORT"); at != std::string::npos; at = routes.find("PORT")) {
    routes.replace(at, 4, std::to_string(aevatar_port));
  }
  return R"yaml(
users:
  - {username: alice, password: pw-alice}
  - {username: carol, password: pw-carol}
  - {username: olga, password: pw-olga}
  - {username: mike, password: pw-mike}
  - {username: paul, password: pw-paul}
  - {username: nora, password: pw-nora}
  - {username: dora, password: pw-dora}
  - {username: rita, password: pw-rita}
orgs:
  - slug: labs
    members: [{username: olga, role: admin}, {username: mike, role: member}]
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - owner: {user: carol}
    catalog_service_id: chrono-sandbox
    forward_access_token: false
  - {owner: {org: labs}, catalog_service_id: chrono-sandbox, credential_source: {allowed: true}}
  - {owner: {user: paul}, catalog_service_id: chrono-sandbox}
  - {owner: {user: rita}, catalog_service_id: chrono-sandbox}
)yaml" + routes;
}

std::string EchoWorkflow(const std::string& id) {
  return "workflow_id: " + id +
         "\nsteps:\n  - id: only\n    tool: code_execute\n    arguments:\n"
         "      language: bash\n      timeout_secs: 30\n      source: echo FAIL_CLOSED_OK\n";
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// One statement against aevatar's workflow database (the sqlite3 shell).
void Sql(AevatarStack& stack, const std::string& statement) {
  const std::string db = stack.dir() + "/aevatar/workflows.db";
  ASSERT_EQ(std::system(("sqlite3 " + db + " \"" + statement + "\"").c_str()), 0) << statement;
}

// What a test needs besides the stack: save, start, wait for runs.
class Runs {
 public:
  explicit Runs(AevatarStack& stack) : stack_(stack) {}

  void Save(const std::string& token, const std::string& id) {
    auto r = stack_.Aevatar("POST", "/api/workflows", token,
                            json{{"workflow_yaml", EchoWorkflow(id)}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  http::ClientResponse Start(const std::string& token, const std::string& id) {
    return stack_.Aevatar("POST", "/api/workflow-runs", token, json{{"workflow_id", id}}.dump());
  }
  // Polls the run until it is done (at most 60 s); returns the last view.
  json WaitDone(const std::string& token, const std::string& run_id) {
    json run;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      run = JsonOf(stack_.Aevatar("GET", "/api/workflow-runs/" + run_id, token));
      if (run.value("done", false)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return run;
  }
  json Events(const std::string& token, const std::string& run_id) {
    return JsonOf(stack_.Aevatar("GET", "/api/workflow-runs/" + run_id + "/events", token))
        .value("events", json::array());
  }

 private:
  AevatarStack& stack_;
};

class AevatarFailClosed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const uint16_t aevatar_port = PickFreePort();
    stack_ = new AevatarStack(Users(aevatar_port), {}, {}, aevatar_port);
  }
  static void TearDownTestSuite() { delete stack_; }
  void SetUp() override { ASSERT_TRUE(stack_->ok()); }
  static AevatarStack& s() { return *stack_; }

  // A call through NyxID's proxy to aevatar on `user`'s route "aevatar":
  // NyxID injects a delegation token minted for aevatar with the route's
  // scopes (alice's carry account:read, nora's do not), and no Authorization.
  http::ClientResponse ViaNyxid(const std::string& user, const std::string& method,
                                const std::string& path, const std::string& body = "") {
    const std::string token = s().Login(user);
    const std::string via = s().nyxid().KeyBySlug(token, "aevatar").value("id", "");
    EXPECT_FALSE(via.empty()) << user;
    return s().nyxid().Call(method, "/api/v1/proxy/aevatar" + path + "?_nyxid_via=" + via, token,
                            body);
  }

  static AevatarStack* stack_;
};
AevatarStack* AevatarFailClosed::stack_ = nullptr;

TEST_F(AevatarFailClosed, StartingASavedPreV6PlanResolvesReadOnlyAndNeverConverges) {
  Runs runs(s());
  const std::string carol = s().Login("carol");
  runs.Save(carol, "carol-plan");  // a fresh save converges carol's route…
  json route = s().nyxid().KeyBySlug(carol, "chrono-sandbox");
  ASSERT_EQ(route["forward_access_token"], true);
  // …which carol then breaks again, and the plan loses its proof (pre-v6).
  auto put = s().nyxid().Call("PUT", "/api/v1/user-services/" + route.value("id", ""), carol,
                              json{{"forward_access_token", false}}.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  Sql(s(), "UPDATE workflows SET admission_proof = 'null' WHERE workflow_id = 'carol-plan';");
  const json before = s().nyxid().KeyBySlug(carol, "chrono-sandbox");
  ExpectProblem(runs.Start(carol, "carol-plan"), 409, "CODE_EXECUTION_ROUTE_POLICY_MISMATCH");
  const json after = s().nyxid().KeyBySlug(carol, "chrono-sandbox");
  EXPECT_EQ(after["forward_access_token"], false) << "the run start converged the route";
  EXPECT_EQ(after["updated_at_ms"], before["updated_at_ms"]);
}

TEST_F(AevatarFailClosed, AV4PlanRunsOnlyForASourceReadableCaller) {
  Runs runs(s());
  const std::string alice = s().Login("alice");
  runs.Save(alice, "v4-plan");
  Sql(s(),
      "UPDATE workflows SET admission_proof = '{\\\"version\\\": "
      "\\\"external-capability-admission.v4\\\"}' WHERE workflow_id = 'v4-plan';");
  // A human: resolved now, read-only, and run.
  auto human = runs.Start(alice, "v4-plan");
  ASSERT_EQ(human.status, 202) << human.body;
  EXPECT_EQ(runs.WaitDone(alice, JsonOf(human).value("run_id", "")).value("status", ""),
            "succeeded");
  // An Agent Key (the credential of scheduled, channel and webhook runs).
  const std::string key = s().nyxid().CreateAgentKey(alice, "v4-scheduled").value("key", "");
  ASSERT_FALSE(key.empty());
  ExpectProblem(runs.Start(key, "v4-plan"), 409, "ADMISSION_PROOF_REQUIRED");
  // Delegation-only ingress: the token NyxID's proxy injects for aevatar.
  ExpectProblem(
      ViaNyxid("alice", "POST", "/api/workflow-runs", json{{"workflow_id", "v4-plan"}}.dump()), 409,
      "ADMISSION_PROOF_REQUIRED");
}

TEST_F(AevatarFailClosed, AV5PlanRequiresARebindForEveryCaller) {
  Runs runs(s());
  const std::string alice = s().Login("alice");
  runs.Save(alice, "v5-plan");
  Sql(s(),
      "UPDATE workflows SET admission_proof = '{\\\"version\\\": "
      "\\\"external-capability-admission.v5\\\", \\\"capability\\\": \\\"code_execute\\\"}' "
      "WHERE workflow_id = 'v5-plan';");
  ExpectProblem(runs.Start(alice, "v5-plan"), 409, "ADMISSION_PROOF_REBIND_REQUIRED");
  const std::string key = s().nyxid().CreateAgentKey(alice, "v5-key").value("key", "");
  ExpectProblem(runs.Start(key, "v5-plan"), 409, "ADMISSION_PROOF_REBIND_REQUIRED");
  auto bound = s().Aevatar("POST", "/api/workflows/v5-plan/bind", alice, "{}");
  ASSERT_EQ(bound.status, 200) << bound.body;
  EXPECT_EQ(JsonOf(bound)["admission"].value("version", ""), "external-capability-admission.v6");
  auto run = runs.Start(key, "v5-plan");
  ASSERT_EQ(run.status, 202) << run.body;
  EXPECT_EQ(runs.WaitDone(key, JsonOf(run).value("run_id", "")).value("status", ""), "succeeded");
}

TEST_F(AevatarFailClosed, DelegationTokenIngressWithAccountReadReachesAdmission) {
  auto ready = ViaNyxid("alice", "GET", "/api/capabilities/code_execute/readiness");
  ASSERT_EQ(ready.status, 200) << ready.body;
  const json body = JsonOf(ready);
  EXPECT_EQ(body.value("ready", false), true) << ready.body;
  EXPECT_EQ(body.value("code", ""), "READY");
  EXPECT_EQ(body["candidates"].value("eligible", 0), 1);
  // aevatar saw a ProxyDelegation caller (its request log names the kind).
  EXPECT_NE(s().aevatar().ReadLog().find("\"credential_kind\":\"ProxyDelegation\""),
            std::string::npos);
  // The same ingress without account:read is refused by aevatar itself.
  ExpectProblem(ViaNyxid("nora", "GET", "/api/capabilities/code_execute/readiness"), 403,
                "TOKEN_SCOPE_MISSING");
}

TEST_F(AevatarFailClosed, RuntimeRereadThatExplicitlyDeniesFailsClosedBeforeTheProxy) {
  Runs runs(s());
  const std::string mike = s().Login("mike");
  const std::string olga = s().Login("olga");
  runs.Save(mike, "mike-plan");  // admitted on the labs route mike may use
  const json route = s().nyxid().KeyBySlug(olga, "chrono-sandbox");
  ASSERT_EQ(route["owner"].value("type", ""), "org") << route.dump();
  auto put = s().nyxid().Call("PUT", "/api/v1/user-services/" + route.value("id", ""), olga,
                              json{{"credential_source", {{"allowed", false}}}}.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  const size_t proxied = Count(s().nyxid().service().ReadLog(), "/api/v1/proxy/");
  auto started = runs.Start(mike, "mike-plan");  // the bound proof and catalog: no read at start
  ASSERT_EQ(started.status, 202) << started.body;
  const json run = runs.WaitDone(mike, JsonOf(started).value("run_id", ""));
  EXPECT_EQ(run.value("status", ""), "failed") << run.dump();
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_route_access_denied");
  EXPECT_FALSE(run["steps"][0].value("diagnostic_id", "").empty());
  EXPECT_EQ(Count(s().nyxid().service().ReadLog(), "/api/v1/proxy/"), proxied)
      << "the step reached NyxID's proxy";
}

TEST_F(AevatarFailClosed, RuntimeRereadOfAnInactiveRouteFailsClosed) {
  Runs runs(s());
  const std::string paul = s().Login("paul");
  runs.Save(paul, "paul-plan");
  const json route = s().nyxid().KeyBySlug(paul, "chrono-sandbox");
  auto put = s().nyxid().Call("PUT", "/api/v1/user-services/" + route.value("id", ""), paul,
                              json{{"active", false}}.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  auto started = runs.Start(paul, "paul-plan");
  ASSERT_EQ(started.status, 202) << started.body;
  const json run = runs.WaitDone(paul, JsonOf(started).value("run_id", ""));
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_route_inactive")
      << run.dump();
}

// The runtime re-read revalidates the facts it read last (aevatar's
// revalidated_facts.h, NyxID's ETag on /api/v1/keys): while they hold, a
// step's re-read is one 304; a route deactivated since the last read is met by
// the next re-read, which fails closed before the proxy.
TEST_F(AevatarFailClosed, RuntimeRereadRevalidatesAndMeetsARouteDeactivatedSince) {
  const std::string rita = s().Login("rita");
  auto two_steps = [](const std::string& id, const std::string& first) {
    return json{{"wait", "none"},
                {"workflow_yaml", "workflow_id: " + id +
                                      "\nsteps:\n  - id: first\n    tool: code_execute\n"
                                      "    arguments: {language: bash, source: '" +
                                      first +
                                      "'}\n  - id: second\n    tool: code_execute\n"
                                      "    arguments: {language: bash, source: echo SECOND}\n"}}
        .dump();
  };
  auto revalidated = [] {
    return Count(s().nyxid().service().ReadLog(), R"("route":"/api/v1/keys","status":304)");
  };
  Runs runs(s());
  const size_t before = revalidated();
  auto unchanged = s().Aevatar("POST", "/api/workflow-runs", rita, two_steps("steady", "echo ONE"));
  ASSERT_EQ(unchanged.status, 202) << unchanged.body;
  json run = runs.WaitDone(rita, JsonOf(unchanged).value("run_id", ""));
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  EXPECT_EQ(run["steps"][1]["output"].value("stdout", ""), "SECOND\n");
  EXPECT_GE(revalidated(), before + 1) << "the second step read both documents again";

  // A saved plan starts on its bound proof, without a read: its step's
  // re-read is the first to meet the change, holding facts kept from before.
  runs.Save(rita, "rita-plan");
  auto first = runs.Start(rita, "rita-plan");
  ASSERT_EQ(first.status, 202) << first.body;
  ASSERT_EQ(runs.WaitDone(rita, JsonOf(first).value("run_id", "")).value("status", ""),
            "succeeded");
  const json route = s().nyxid().KeyBySlug(rita, "chrono-sandbox");
  auto put = s().nyxid().Call("PUT", "/api/v1/user-services/" + route.value("id", ""), rita,
                              json{{"active", false}}.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  const size_t proxied = Count(s().nyxid().service().ReadLog(), "/api/v1/proxy/");
  auto second = runs.Start(rita, "rita-plan");
  ASSERT_EQ(second.status, 202) << second.body;
  run = runs.WaitDone(rita, JsonOf(second).value("run_id", ""));
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_route_inactive")
      << run.dump();
  EXPECT_EQ(Count(s().nyxid().service().ReadLog(), "/api/v1/proxy/"), proxied)
      << "the step reached NyxID's proxy";
}

TEST_F(AevatarFailClosed, RouteRejectionsUseTheSpecsCategoryAndLogOnlyIdCategoryAndCounts) {
  const std::string dora = s().Login("dora");  // no chrono-sandbox route at all
  auto r = s().Aevatar("GET", "/api/capabilities/code_execute/readiness", dora);
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = JsonOf(r);
  EXPECT_EQ(body.value("code", ""), "CODE_EXECUTION_ROUTE_MISSING");
  EXPECT_EQ(body.value("category", ""), "code_execution_route_missing");
  const std::string diagnostic_id = body.value("diagnostic_id", "");
  ASSERT_FALSE(diagnostic_id.empty());
  // The handler writes the line before it answers.
  json line;
  std::istringstream log(s().aevatar().ReadLog());
  for (std::string text; std::getline(log, text);) {
    if (text.find(diagnostic_id) == std::string::npos) continue;
    json parsed = json::parse(text, nullptr, false);
    if (parsed.value("event", "") == "code_execute.route_rejected") line = parsed;
  }
  ASSERT_TRUE(line.is_object()) << "no rejection line for " << diagnostic_id;
  EXPECT_EQ(line.value("category", ""), "code_execution_route_missing");
  for (const auto& [key, value] : line.items()) {
    static const std::set<std::string> kAllowed = {
        "accessible", "active",     "canonical", "category", "diagnostic_id", "eligible", "event",
        "level",      "request_id", "tag",       "ts"};
    EXPECT_EQ(kAllowed.count(key), 1u) << "the rejection log line carries " << key;
  }
}

TEST_F(AevatarFailClosed, RequestBodiesOfTheWrongTypeAreTyped400s) {
  const std::string alice = s().Login("alice");
  ExpectProblem(s().Aevatar("POST", "/api/workflow-runs", alice, R"({"workflow_yaml": 5})"), 400,
                "INVALID_FIELD_TYPE");
  ExpectProblem(
      s().Aevatar("POST", "/api/workflow-runs", alice, R"({"workflow_id": "x", "inputs": []})"),
      400, "INVALID_FIELD_TYPE");
  ExpectProblem(s().Aevatar("POST", "/api/workflows", alice, R"({"workflow_yaml": {}})"), 400,
                "INVALID_FIELD_TYPE");
  EXPECT_EQ(s().Aevatar("GET", "/healthz", "").status, 200);
}

// A 401 on the runtime re-read (the human credential no longer verifies at
// NyxID) does not fail the step there: it continues on the sealed id, and
// NyxID makes the final credential check on that exact proxy request.
TEST(AevatarRuntimeReread, A401ContinuesOnTheSealedIdToNyxidsFinalCheck) {
  AevatarStack stack(R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml");
  ASSERT_TRUE(stack.ok());
  Runs runs(stack);
  const std::string alice = stack.Login("alice");
  runs.Save(alice, "sealed-plan");
  // NyxID comes back under another issuer: alice's token still verifies at
  // aevatar (same signing keys) but NyxID answers it 401.
  stack.nyxid().Restart({"--public-url", "http://rotated-issuer.invalid"});
  ASSERT_TRUE(stack.nyxid().ok());
  ASSERT_EQ(stack.nyxid().Call("GET", "/api/v1/keys", alice).status, 401);
  auto started = runs.Start(alice, "sealed-plan");
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_id = JsonOf(started).value("run_id", "");
  const json run = runs.WaitDone(alice, run_id);
  EXPECT_EQ(run["steps"][0].value("outcome_code", ""), "code_execution_route_access_denied")
      << run.dump();
  bool continued = false;
  for (const json& event : runs.Events(alice, run_id)) {
    if (event.value("type", "") == "route.checked") {
      continued = event["data"].value("nyxid", "") == "unauthorized" &&
                  event["data"].value("result", "") == "continue_sealed";
    }
  }
  EXPECT_TRUE(continued) << runs.Events(alice, run_id).dump();
  // The submit reached NyxID's proxy, which refused the credential.
  const std::string log = stack.aevatar().ReadLog();
  EXPECT_NE(log.find("submit: HTTP 401"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
