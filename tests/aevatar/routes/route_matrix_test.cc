// The adversarial matrix of aevatar's router (tests/testing/route_matrix.h):
// every route of a real AevatarService (workflows, approvals, managed codex,
// /ui: all of them on), called on alice's things with each credential an
// attacker might hold, answers what one table says. A route added without a
// row fails the test.
//
// The credentials are real: a `nyxid serve` on loopback (the stack's
// bootstrap, aevatar registered for introspection) logs the users in and
// makes the key; only the foreign delegation token is minted here, with
// NyxID's own signing key, because NyxID mints delegation tokens only for
// the upstream of a proxied call. The rows mean:
//   none, forged          no credential / an alg-none token naming alice: 401;
//   other-user            bob's access token: alice's run, saved workflow and
//                         approval are 404, lists show only bob's things;
//   org-viewer            vera, a viewer of alice's org: aevatar knows no
//                         orgs, so she is one more other user (404); what she
//                         may use of the org's routes is NyxID's decision;
//   restricted-key        alice's own Agent Key restricted to another
//                         service: an execution credential at aevatar
//                         (aevatar/admission/agent_key_scope.h): every route
//                         that reads or manages her things is 403
//                         AGENT_KEY_RESTRICTED; it may start her saved
//                         workflow (whose steps NyxID then refuses it) and
//                         call the tools, where NyxID's proxy refuses it on
//                         code_execute and aevatar on managed codex_exec
//                         (403 AGENT_KEY_SERVICE_NOT_ALLOWED);
//   foreign-delegation    alice's delegation token minted for another
//                         audience: 401.
#include "testing/route_matrix.h"

#include <map>
#include <memory>
#include <string>

#include "aevatar/api/http_api.h"
#include "aevatar/api/service.h"
#include "aevatar_stack.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid/tokens/signing_keys.h"
#include "nyxid/tokens/token_service.h"
#include "testing/openapi_check.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;
using namespace ::aevatar::testing;  // NOLINT: the matrix vocabulary

// alice's chrono-sandbox route points at a closed port: nothing here needs
// an executor, and a run of hers simply keeps retrying.
constexpr char kUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
  - {username: bob, password: pw-bob}
  - {username: vera, password: pw-vera}
orgs:
  - slug: acme
    members: [{username: alice, role: admin}, {username: vera, role: viewer}]
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
  - {owner: {org: acme}, catalog_service_id: chrono-sandbox, slug: acme-chrono}
)yaml";

constexpr char kPlan[] =
    "workflow_id: alice-plan\nsteps:\n  - id: one\n    tool: code_execute\n    arguments:\n"
    "      language: bash\n      source: echo ALICE_SECRET_OUTPUT\n";

constexpr char kMcpInitialize[] =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}})";

// A version of alice's skill (public: nothing in it is a victim id).
json SkillBody(const std::string& version) {
  return {{"skill_yaml", "name: alice-skill\nversion: " + version + "\ndescription: hers\n"},
          {"assets",
           {{"skill-plan.yaml",
             "workflow_id: skill-plan\nsteps:\n  - id: one\n    tool: code_execute\n"
             "    arguments:\n      language: bash\n      source: echo from a skill\n"}}}};
}

const json kPrivateSsh = {
    {"target",
     {{"kind", "private_ssh"}, {"private_ssh", {{"service", "box"}, {"principal", "alice"}}}}},
    {"prompt", "hi"}};

class AevatarRouteMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    nyxid_ = std::make_unique<NyxidFixture>(StackBootstrapYaml("http://127.0.0.1:9", "", kUsers));
    ASSERT_TRUE(nyxid_->ok());
    ServiceConfig config;
    config.listen = "127.0.0.1:0";
    config.state_dir = dir_.path() + "/aevatar";
    config.vault_key_file = dir_.path() + "/vault.key";
    config.nyxid_url = nyxid_->url();
    config.introspection_secret = kStackIntrospectionSecret;
    config.managed_codex = "all";
    auto service = AevatarService::Start(config);
    ASSERT_TRUE(service.ok()) << service.status();
    aevatar_ = std::move(*service);

    alice_ = nyxid_->Login("alice", "pw-alice");
    bob_ = nyxid_->Login("bob", "pw-bob");
    vera_ = nyxid_->Login("vera", "pw-vera");
    ASSERT_FALSE(alice_.empty() || bob_.empty() || vera_.empty());
    alice_id_ = JsonOf(nyxid_->Call("GET", "/api/v1/me", alice_)).value("id", "");
    restricted_key_ =
        nyxid_->CreateAgentKey(alice_, "elsewhere", {"some-other-service"}).value("key", "");
    ASSERT_FALSE(restricted_key_.empty());
    auto keys = nyxid::KeyRing::LoadOrCreate(nyxid_->dir() + "/state", base::NowUnixSecs(), 3900);
    ASSERT_TRUE(keys.ok()) << keys.status();
    const nyxid::TokenService tokens(keys->get(), "nyxid", base::NowUnixSecs);
    foreign_delegation_ =
        tokens.MintDelegation(alice_id_, "some-other-audience", {"account:read", "proxy:*"});

    // alice's things: her managed credential, a saved workflow, a run of
    // it, a pending approval.
    http::Response saved = AsAlice("POST", "/api/workflows", json{{"workflow_yaml", kPlan}});
    ASSERT_EQ(saved.status, 201) << saved.body;
    http::Response run = AsAlice("POST", "/api/workflow-runs", json{{"workflow_id", "alice-plan"}});
    ASSERT_EQ(run.status, 202) << run.body;
    run_id_ = json::parse(run.body).value("run_id", "");
    http::Response asked = AsAlice("POST", "/api/tools/codex_exec", kPrivateSsh);
    ASSERT_EQ(asked.status, 202) << asked.body;
    approval_id_ = json::parse(asked.body).value("approval_id", "");
    ASSERT_FALSE(run_id_.empty() || approval_id_.empty());
    // Her skill, and her mount of it.
    http::Response published = AsAlice("POST", "/api/skills", SkillBody("1.0.0"));
    ASSERT_EQ(published.status, 201) << published.body;
    http::Response mounted = AsAlice(
        "POST", "/api/skills/use", json{{"skill", "alice-skill@1.0.0"}, {"mount_workflows", true}});
    ASSERT_EQ(mounted.status, 202) << mounted.body;
    mount_id_ = json::parse(mounted.body).value("mount_id", "");
    ASSERT_FALSE(mount_id_.empty());
    // After the save, whose admission converged her chrono-sandbox route to
    // the managed contract.
    http::Response credential = AsAlice("POST", "/api/managed-codex/credential", json::object());
    ASSERT_EQ(credential.status, 200) << credential.body;
  }
  void TearDown() override {
    if (aevatar_) aevatar_->Stop();
  }

  http::Response AsAlice(const std::string& method, const std::string& path, const json& body) {
    return As(alice_, method, path, body.dump());
  }

  http::Response As(const std::string& credential, const std::string& method,
                    const std::string& target, const std::string& body) {
    http::Request request;
    request.method = method;
    request.target = target;
    const size_t q = target.find('?');
    request.path = target.substr(0, q);
    if (q != std::string::npos) request.query = target.substr(q + 1);
    request.body = body;
    request.headers.Set("Content-Type", "application/json");
    request.headers.Set("Authorization", "Bearer " + credential);
    return aevatar_->router().Handle(request);
  }

  std::string Credential(Attacker attacker) const {
    switch (attacker) {
      case kNone:
        return "";
      case kForged:
        return base::Base64UrlEncode(R"({"alg":"none"})") + "." +
               base::Base64UrlEncode(json{
                   {"sub", alice_id_},
                   {"token_kind", "access"},
                   {"aud", "nyxid"},
                   {"scope",
                    "account:read"}}.dump()) +
               ".";
      case kOtherUser:
        return bob_;
      case kOrgViewer:
        return vera_;
      case kRestrictedKey:
        return restricted_key_;
      case kForeignDelegation:
        return foreign_delegation_;
    }
    return "";
  }

  // The concrete path of `pattern` on alice's things.
  std::string PathOf(const std::string& pattern) const {
    std::string path = pattern;
    std::string id = run_id_;
    if (pattern.rfind("/api/workflows/", 0) == 0) id = "alice-plan";
    if (pattern.rfind("/api/approvals/", 0) == 0) id = approval_id_;
    if (size_t at = path.find("{id}"); at != std::string::npos) path.replace(at, 4, id);
    if (pattern.rfind("/api/skills/mounts/", 0) == 0) id = mount_id_;
    if (size_t at = path.find("{name}"); at != std::string::npos)
      path.replace(at, 6, "alice-skill");
    if (size_t at = path.find("{version}"); at != std::string::npos) path.replace(at, 9, "1.0.0");
    if (pattern == "/api/audit") path += "?run_id=" + run_id_;
    return path;
  }

  TempDir dir_;
  std::unique_ptr<NyxidFixture> nyxid_;
  std::unique_ptr<AevatarService> aevatar_;
  std::string alice_, bob_, vera_, alice_id_, restricted_key_, foreign_delegation_;
  std::string run_id_, approval_id_, mount_id_;
};

// Bodies are valid where validation would otherwise answer first, so the
// rows reach the authorization they are about: bob has no chrono-sandbox
// route (409 CODE_EXECUTION_ROUTE_MISSING), vera may not use her org's
// (403 CODE_EXECUTION_ROUTE_ACCESS_DENIED), and alice's restricted key is
// refused by NyxID's proxy on code_execute and by aevatar on managed
// codex_exec (403 AGENT_KEY_SERVICE_NOT_ALLOWED), and everywhere else but
// the run start (403 AGENT_KEY_RESTRICTED).
std::map<std::string, MatrixRow> Table() {
  const std::string save = json{{"workflow_yaml", kPlan}}.dump();
  const std::string start_saved = json{{"workflow_id", "alice-plan"}}.dump();
  const std::string execute = json{{"language", "bash"}, {"source", "echo hi"}}.dump();
  const std::string use_skill = json{{"skill", "alice-skill@1.0.0"}}.dump();
  const std::string managed = json{
      {"target", {{"kind", "managed_sandbox"}}},
      {"workspace", {{"kind", "empty_git"}}},
      {"prompt", "hi"}}.dump();
  return {
      // Workflows: another user's saved plan, run or audit is 404.
      {"POST /api/workflows", Authenticated(409, 403, 403, 401, save)},
      {"POST /api/workflows/{id}/bind", Authenticated(404, 404, 403, 401)},
      {"POST /api/workflow-runs", Authenticated(404, 404, 202, 401, start_saved)},
      {"GET /api/workflow-runs", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/workflow-runs/{id}", Authenticated(404, 404, 403, 401)},
      {"GET /api/workflow-runs/{id}/events", Authenticated(404, 404, 403, 401)},
      {"POST /api/workflow-runs/{id}/stop", Authenticated(404, 404, 403, 401)},
      {"GET /api/audit", Authenticated(404, 404, 403, 401)},
      // Triggers: a webhook delivery's credential is its signature (none
      // here: 401 for everyone, whatever bearer comes along); another
      // user's triggers are 404; only a human login fills the vault.
      {"POST /api/hooks/{id}", Everyone(401)},
      {"GET /api/workflows/{id}/triggers", Authenticated(404, 404, 403, 401)},
      {"POST /api/triggers/agent-key", Authenticated(409, 409, 403, 401)},
      // Managed codex: per user (bob and vera have no credential); only a
      // human login mints the credential.
      {"POST /api/tools/codex_exec", Authenticated(409, 409, 403, 401, managed)},
      {"POST /api/managed-codex/credential", Authenticated(409, 409, 403, 401)},
      {"GET /api/managed-codex/credential", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/capabilities/codex_exec/readiness", Authenticated(kOwn, kOwn, 403, 401)},
      // Approvals: another user's is 404; only a human login approves.
      {"GET /api/approvals", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/approvals/{id}", Authenticated(404, 404, 403, 401)},
      {"POST /api/approvals/{id}/approve", Authenticated(404, 404, 403, 401)},
      {"POST /api/approvals/{id}/deny", Authenticated(404, 404, 403, 401)},
      // Skills are public to aevatar's users (never naming a publisher);
      // a name is its first publisher's; a mount is its caller's.
      {"POST /api/skills", Authenticated(403, 403, 403, 401, SkillBody("2.0.0").dump())},
      {"GET /api/skills", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/skills/{name}", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/skills/{name}/versions/{version}", Authenticated(kOwn, kOwn, 403, 401)},
      {"POST /api/skills/use", Authenticated(kOwn, kOwn, 403, 401, use_skill)},
      {"GET /api/skills/mounts/{id}", Authenticated(404, 404, 403, 401)},
      // The page is public; its login wants a username and password.
      {"GET /ui", Everyone(200)},
      {"GET /ui/", Everyone(200)},
      {"GET /ui/app.js", Everyone(200)},
      {"GET /ui/style.css", Everyone(200)},
      {"POST /ui/login", Everyone(400)},
      {"GET /api/tools", Authenticated(200, 200, 200, 401)},
      {"POST /api/tools/code_execute", Authenticated(409, 403, 403, 401, execute)},
      {"GET /api/capabilities/code_execute/readiness", Authenticated(kOwn, kOwn, 403, 401)},
      {"GET /api/info", Everyone(200)},
      {"GET /healthz", Everyone(200)},
      {"GET /readyz", Everyone(200)},
      // MCP: a session is the caller's own; without one, DELETE finds none.
      {"POST /mcp", Authenticated(kOwn, kOwn, kOwn, 401, kMcpInitialize)},
      {"DELETE /mcp", Authenticated(404, 404, 404, 401)},
      // The matrix calls from a non-loopback address and no metrics token is set.
      {"GET /metrics", Everyone(403)},
      {"GET /openapi.json", Everyone(200)},
  };
}

TEST_F(AevatarRouteMatrix, EveryRouteAnswersEachAttackerAsTheTableSays) {
  MatrixSubject subject;
  subject.router = &aevatar_->router();
  subject.path_of = [this](const std::string& pattern) { return PathOf(pattern); };
  subject.present = [this](Attacker attacker, http::Request& request) {
    const std::string credential = Credential(attacker);
    if (!credential.empty()) request.headers.Set("Authorization", "Bearer " + credential);
  };
  subject.victim_ids = {run_id_, approval_id_, "alice-plan", alice_id_, mount_id_};
  RunRouteMatrix(subject, Table());
}

// The router (workflows and approvals on: every route) and its OpenAPI
// document (src/aevatar/api/openapi/) name the same operations, both ways,
// and openapi-spec-validator accepts the document.
TEST_F(AevatarRouteMatrix, OpenApiDocumentCoversEveryRouteAndNothingElse) {
  ExpectOpenApiMatchesRouter(aevatar_->router(), OpenApiFragments(), "src/aevatar/api/openapi/");
}

TEST(AevatarOpenApi, DocumentPassesOpenApiSpecValidator) {
  ExpectOpenApiSpecValid(OpenApiFragments());
}

// The restricted key, route by route from the router itself: it lists the
// tools, the tool calls are refused where the key meets its restriction
// (NyxID's proxy for code_execute, aevatar for managed codex_exec), starting
// the saved workflow is admitted, a draft run is not, and every other
// authenticated route is 403 AGENT_KEY_RESTRICTED. Nothing of alice's
// changed on the way.
TEST_F(AevatarRouteMatrix, ARestrictedKeyOnlyInvokesAndEveryOtherRouteIsAgentKeyRestricted) {
  // The admitted routes: a typed refusal's code, or "" with the success status.
  const std::map<std::string, std::string> invocations = {
      {"GET /api/tools", ""},
      {"POST /api/tools/code_execute", "AGENT_KEY_SERVICE_NOT_ALLOWED"},
      {"POST /api/tools/codex_exec", "AGENT_KEY_SERVICE_NOT_ALLOWED"},
      {"POST /api/workflow-runs", ""},
      {"POST /mcp", ""},
      {"DELETE /mcp", ""}};
  // The admitted routes' success: 200 for a read or an MCP initialize, 202
  // for a started run; DELETE /mcp without a session finds none (404).
  const auto admitted_status = [](const std::string& key) {
    if (key == "DELETE /mcp") return 404;
    return key.rfind("GET ", 0) == 0 || key == "POST /mcp" ? 200 : 202;
  };
  const std::map<std::string, MatrixRow> table = Table();
  int restricted_routes = 0;
  for (const auto& [method, pattern] : aevatar_->router().Routes()) {
    const std::string key = method + " " + pattern;
    const MatrixRow& row = table.at(key);
    // Public (no credential is read), or a webhook (its credential is the
    // signature, never a bearer).
    if (row.expect.at(kNone) != 401 || key == "POST /api/hooks/{id}") continue;
    const http::Response response = As(restricted_key_, method, PathOf(pattern), row.body);
    const std::string code = json::parse(response.body, nullptr, false).value("code", "");
    if (auto it = invocations.find(key); it != invocations.end()) {
      if (it->second.empty()) {
        EXPECT_EQ(response.status, admitted_status(key)) << key << ": " << response.body;
      } else {
        EXPECT_EQ(response.status, 403) << key << ": " << response.body;
        EXPECT_EQ(code, it->second) << key;
      }
      continue;
    }
    ++restricted_routes;
    EXPECT_EQ(response.status, 403) << key << ": " << response.body;
    EXPECT_EQ(code, "AGENT_KEY_RESTRICTED") << key;
  }
  EXPECT_GE(restricted_routes, 15);
  const http::Response draft =
      As(restricted_key_, "POST", "/api/workflow-runs", json{{"workflow_yaml", kPlan}}.dump());
  EXPECT_EQ(draft.status, 403) << draft.body;
  EXPECT_EQ(json::parse(draft.body).value("code", ""), "AGENT_KEY_RESTRICTED");
  // The refused deny and stop changed nothing.
  const json approval =
      json::parse(AsAlice("GET", "/api/approvals/" + approval_id_, json::object()).body);
  EXPECT_EQ(approval.value("state", ""), "pending") << approval.dump();
  const json run =
      json::parse(AsAlice("GET", "/api/workflow-runs/" + run_id_, json::object()).body);
  EXPECT_FALSE(run.contains("stop_deadline_unix_ms")) << run.dump();
}

}  // namespace
}  // namespace aevatar::orchestrator
