// The proxy end to end: a real `nyxid serve` in front of a real
// `chrono-sandbox serve` that verifies nyxid's delegation tokens against
// nyxid's published JWKS URL. Nothing is stubbed.
#include <chrono>
#include <thread>

#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid_fixture.h"

namespace aevatar::testing {
namespace {

constexpr char kAlicePassword[] = "alice-PLANTED-password-7731";

std::string ProxyBootstrap(uint16_t chrono_port) {
  return std::string(R"yaml(
users:
  - {username: alice, password: ")yaml") +
         kAlicePassword + R"yaml("}
  - {username: bob, password: bob-password-1}
catalog:
  - id: cat_chrono_sandbox
    slug: chrono-sandbox
    name: Chrono Sandbox
    base_url: http://127.0.0.1:)yaml" +
         std::to_string(chrono_port) + R"yaml(
    auto_connect: true
    default_policy:
      forward_access_token: true
      inject_delegation_token: true
      delegation_token_scope: "proxy:* sandbox:execute"
user_services:
  - owner: {user: alice}
    catalog_service_id: cat_chrono_sandbox
    slug: chrono-noinject
    label: Chrono without delegation
    forward_access_token: true
    inject_delegation_token: false
)yaml";
}

class NyxidProxy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const uint16_t nyxid_port = PickFreePort();
    const std::string nyxid_url = "http://127.0.0.1:" + std::to_string(nyxid_port);
    chrono_dir_ = new TempDir();
    chrono_ = new ServiceProcess(
        {BinaryPath("chrono-sandbox"), "serve", "--listen", "127.0.0.1:0", "--state-dir",
         chrono_dir_->path() + "/state", "--jwks-url", nyxid_url + "/.well-known/jwks.json",
         "--nyxid-base-url", nyxid_url, "--workers", "2"},
        chrono_dir_->path() + "/chrono.log");
    nyxid_ = new NyxidFixture(ProxyBootstrap(chrono_->port()), {}, nyxid_port);
    alice_ = nyxid_->Login("alice", kAlicePassword);
    route_ = nyxid_->KeyBySlug(alice_, "chrono-sandbox").value("id", "");
  }
  static void TearDownTestSuite() {
    delete nyxid_;
    delete chrono_;
    delete chrono_dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(chrono_->ok()) << chrono_->ReadLog();
    ASSERT_TRUE(nyxid_->ok()) << nyxid_->service().ReadLog();
    ASSERT_FALSE(alice_.empty());
    ASSERT_FALSE(route_.empty());
  }

  static std::string ProxyPath(const std::string& rest, const std::string& slug = "chrono-sandbox",
                               const std::string& via = route_) {
    return "/api/v1/proxy/" + slug + rest + (rest.find('?') == std::string::npos ? "?" : "&") +
           "_nyxid_via=" + via;
  }

  static TempDir* chrono_dir_;
  static ServiceProcess* chrono_;
  static NyxidFixture* nyxid_;
  static std::string alice_;
  static std::string route_;
};
TempDir* NyxidProxy::chrono_dir_ = nullptr;
ServiceProcess* NyxidProxy::chrono_ = nullptr;
NyxidFixture* NyxidProxy::nyxid_ = nullptr;
std::string NyxidProxy::alice_;
std::string NyxidProxy::route_;

TEST_F(NyxidProxy, ExecuteRunsThroughTheProxyForAHumanWithoutNyxidEnv) {
  nlohmann::json key = nyxid_->KeyBySlug(alice_, "chrono-sandbox");
  EXPECT_EQ(key["auto_connected"], true);
  auto response = nyxid_->Call(
      "POST", ProxyPath("/execute"), alice_,
      R"json({"language":"bash","script":"echo \"key=${NYXID_API_KEY:-none} url=${NYXID_BASE_URL:-none}\"","timeout_secs":30})json",
      {{"X-NyxID-Delegation-Token", "forged-by-caller"}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "application/json");
  nlohmann::json body = JsonOf(response);
  EXPECT_EQ(body["exit_code"], 0);
  EXPECT_EQ(body["stdout"], "key=none url=none\n");
}

TEST_F(NyxidProxy, AnAgentKeyCallersProgramSeesItAsNyxidApiKey) {
  const std::string agent_key = nyxid_->CreateAgentKey(alice_, "program").value("key", "");
  ASSERT_FALSE(agent_key.empty());
  auto response = nyxid_->Call(
      "POST", ProxyPath("/execute"), agent_key,
      R"json({"language":"bash","script":"printf %s \"$NYXID_API_KEY\" | sha256sum | cut -c1-64; echo \"$NYXID_BASE_URL\"","timeout_secs":30})json");
  ASSERT_EQ(response.status, 200) << response.body;
  nlohmann::json body = JsonOf(response);
  EXPECT_EQ(body["stdout"], base::Sha256Hex(agent_key) + "\n" + nyxid_->url() + "\n");
}

TEST_F(NyxidProxy, ARouteWithoutDelegationIsRefusedByChrono) {
  const std::string noinject = nyxid_->KeyBySlug(alice_, "chrono-noinject").value("id", "");
  ASSERT_FALSE(noinject.empty());
  auto response = nyxid_->Call("POST", ProxyPath("/execute", "chrono-noinject", noinject), alice_,
                               R"json({"language":"bash","script":"echo ran"})json",
                               {{"X-NyxID-Delegation-Token", "forged-by-caller"}});
  ExpectProblem(response, 401, "DELEGATION_TOKEN_MISSING");
  EXPECT_EQ(response.body.find("ran"), std::string::npos);
}

TEST_F(NyxidProxy, TheExecutionsLifecyclePreservesLocationEtagRetryAfterAnd304) {
  const std::string payload =
      R"json({"language":"python","script":"import time\ntime.sleep(1)\nprint('durable')","timeout_secs":30})json";
  const std::string idempotency_key = "idem-" + base::RandomId("");
  auto missing = nyxid_->Call("POST", ProxyPath("/executions"), alice_, payload);
  ExpectProblem(missing, 400, "IDEMPOTENCY_KEY_MISSING");

  auto submitted = nyxid_->Call("POST", ProxyPath("/executions"), alice_, payload,
                                {{"Idempotency-Key", idempotency_key}});
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  const std::string location = submitted.headers.Get("Location").value_or("");
  ASSERT_EQ(location.rfind("/executions/", 0), 0u) << location;
  EXPECT_TRUE(submitted.headers.Get("ETag").has_value());
  EXPECT_EQ(submitted.headers.Get("Retry-After").value_or(""), "1");
  const std::string operation_id = JsonOf(submitted).value("operation_id", "");
  EXPECT_EQ(location, "/executions/" + operation_id);

  // Same key, same payload: the same operation.
  auto again = nyxid_->Call("POST", ProxyPath("/executions"), alice_, payload,
                            {{"Idempotency-Key", idempotency_key}});
  EXPECT_EQ(JsonOf(again).value("operation_id", ""), operation_id);

  // Not terminal yet: result is 409 with Retry-After.
  auto early = nyxid_->Call("GET", ProxyPath(location + "/result"), alice_);
  if (early.status == 409) {
    EXPECT_EQ(JsonOf(early).value("code", ""), "OPERATION_NOT_TERMINAL");
    EXPECT_TRUE(early.headers.Get("Retry-After").has_value());
  }

  // Poll the status through the proxy until terminal.
  nlohmann::json status;
  http::ClientResponse polled;
  bool saw_retry_after = false;
  for (int i = 0; i < 120; ++i) {
    polled = nyxid_->Call("GET", ProxyPath(location), alice_);
    ASSERT_EQ(polled.status, 200) << polled.body;
    status = JsonOf(polled);
    if (polled.headers.Get("Retry-After")) saw_retry_after = true;
    const std::string state = status.value("status", "");
    if (state == "succeeded" || state == "failed" || state == "cancelled") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(status.value("status", ""), "succeeded") << status.dump();
  EXPECT_TRUE(saw_retry_after);
  EXPECT_FALSE(polled.headers.Get("Retry-After").has_value());  // terminal: no more polling hint
  const std::string etag = polled.headers.Get("ETag").value_or("");
  ASSERT_FALSE(etag.empty());

  auto not_modified =
      nyxid_->Call("GET", ProxyPath(location), alice_, "", {{"If-None-Match", etag}});
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_TRUE(not_modified.body.empty());
  EXPECT_EQ(not_modified.headers.Get("ETag").value_or(etag), etag);

  auto result = nyxid_->Call("GET", ProxyPath(location + "/result"), alice_);
  ASSERT_EQ(result.status, 200) << result.body;
  EXPECT_EQ(JsonOf(result)["stdout"], "durable\n");

  auto cancel = nyxid_->Call("POST", ProxyPath(location + "/cancel"), alice_, "{}");
  EXPECT_EQ(cancel.status, 200) << cancel.body;
  EXPECT_EQ(JsonOf(cancel).value("status", ""), "succeeded");  // already done: unchanged

  // Another user cannot see it even with their own route to the same service.
  const std::string bob = nyxid_->Login("bob", "bob-password-1");
  const std::string bob_route = nyxid_->KeyBySlug(bob, "chrono-sandbox").value("id", "");
  ExpectProblem(nyxid_->Call("GET", ProxyPath(location, "chrono-sandbox", bob_route), bob), 404,
                "OPERATION_NOT_FOUND");
  // And cannot use alice's route.
  ExpectProblem(nyxid_->Call("GET", ProxyPath(location), bob), 404, "USER_SERVICE_NOT_FOUND");
}

TEST_F(NyxidProxy, LargeBodiesStreamThrough) {
  auto response = nyxid_->Call(
      "POST", ProxyPath("/execute"), alice_,
      R"json({"language":"python","script":"import sys\nsys.stdout.write('y' * 600000)","timeout_secs":30})json");
  ASSERT_EQ(response.status, 200) << response.body.substr(0, 300);
  nlohmann::json body = JsonOf(response);
  ASSERT_TRUE(body.is_object());
  EXPECT_GT(body["stdout"].get<std::string>().size(), 256u << 10);
  EXPECT_EQ(body["stdout"].get<std::string>().find_first_not_of('y'), std::string::npos);
}

// Runs last in this suite (gtest keeps declaration order): every secret the
// tests used is planted; none may appear in either service's log.
TEST_F(NyxidProxy, ZzNoSecretInAnyLogLine) {
  const std::string agent_key = nyxid_->CreateAgentKey(alice_, "planted").value("key", "");
  nyxid_->Call("POST", ProxyPath("/execute"), agent_key,
               R"json({"language":"bash","script":"true"})json");
  // A body large enough to be streamed, so the streaming path is in the log too.
  nyxid_->Call("POST", ProxyPath("/execute"), agent_key,
               R"json({"language":"python","script":"print('z' * 400000)","timeout_secs":30})json");
  nyxid_->Call("POST", "/api/v1/auth/login", "",
               R"json({"username":"alice","password":"wrong-PLANTED-guess-4410"})json");
  // Sentinel lines after the calls above: an absent secret is absent, not late.
  ASSERT_TRUE(nyxid_->service().WaitForSentinel("/api/v1/me"));
  ASSERT_TRUE(chrono_->WaitForSentinel("/executions/op_sentinel"));
  EXPECT_NE(nyxid_->service().ReadLog().find("\"streamed\":true"), std::string::npos);
  for (const std::string& log : {nyxid_->service().ReadLog(), chrono_->ReadLog()}) {
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.find(kAlicePassword), std::string::npos);
    EXPECT_EQ(log.find("PLANTED"), std::string::npos);
    EXPECT_EQ(log.find(alice_), std::string::npos);
    EXPECT_EQ(log.find(agent_key), std::string::npos);
    EXPECT_EQ(log.find("nyxid_ag_"), std::string::npos);
    EXPECT_EQ(log.find("eyJ"), std::string::npos);  // no JWS at all: access or delegation
    EXPECT_EQ(log.find("argon2"), std::string::npos);
    EXPECT_EQ(log.find(route_), std::string::npos);  // route ids stay out of logs too
  }
}

}  // namespace
}  // namespace aevatar::testing
