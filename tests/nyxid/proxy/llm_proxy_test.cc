// The chrono-llm-public model route end to end: a real `nyxid serve` in front
// of an in-test upstream that records what reaches the "provider". Proves
// which credential goes upstream (the operator's provider key, nothing of the
// caller's), the model allowlist, that server-sent events are not held back,
// the proxy's typed deadline, and that the provider key never leaves nyxid.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nyxid/proxy/recording_upstream.h"
#include "nyxid_fixture.h"

namespace aevatar::testing {
namespace {

constexpr char kPassword[] = "alice-password-1";
constexpr char kLlmSlug[] = "chrono-llm-public";
const std::string kBody = R"({"model":"gpt-double-1","input":"hello","stream":true})";

std::string Bootstrap(const std::string& upstream_url, const std::string& key_file) {
  return R"yaml(
users:
  - {username: alice, password: alice-password-1}
catalog:
  - id: cat_chrono_llm_public
    slug: chrono-llm-public
    name: Chrono LLM (public)
    kind: llm
    base_url: )yaml" +
         upstream_url + R"yaml(/v1
    provider_api_key_file: )yaml" +
         key_file + R"yaml(
    model_allowlist: [gpt-double-1]
    delegation_audiences: [chrono-sandbox]
    auto_connect: true
  - id: cat_chrono_sandbox
    slug: chrono-sandbox
    base_url: )yaml" +
         upstream_url + R"yaml(/chrono
    auto_connect: true
    default_policy:
      forward_access_token: true
      inject_delegation_token: true
      delegation_token_scope: "proxy:* sandbox:execute"
user_services:
  - owner: {user: alice}
    catalog_service_id: cat_chrono_sandbox
    slug: chrono-noproxy
    delegation_token_scope: "sandbox:execute"
  - owner: {user: alice}
    slug: other-service
    base_url: )yaml" +
         upstream_url + R"yaml(/other
    inject_delegation_token: true
    delegation_token_scope: "proxy:*"
  - owner: {user: alice}
    slug: plain
    base_url: )yaml" +
         upstream_url + R"yaml(/plain
  - owner: {user: alice}
    catalog_service_id: cat_chrono_llm_public
    slug: llm-forwarding
    forward_access_token: true
    inject_delegation_token: true
)yaml";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LlmProxy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    upstream_ = new RecordingUpstream();
    key_dir_ = new TempDir();
    provider_key_ = "sk-PLANTED-provider-" + base::RandomId("");
    std::ofstream(key_dir_->path() + "/provider.key") << provider_key_ << "\n";
    nyxid_ = new NyxidFixture(Bootstrap(upstream_->url(), key_dir_->path() + "/provider.key"));
    alice_ = nyxid_->Login("alice", kPassword);
  }
  static void TearDownTestSuite() {
    delete nyxid_;
    delete key_dir_;
    delete upstream_;
  }
  void SetUp() override {
    ASSERT_TRUE(nyxid_->ok()) << nyxid_->service().ReadLog();
    ASSERT_FALSE(alice_.empty());
    upstream_->SetMode(RecordingUpstream::Mode::kEvents);
  }

  static std::string RouteId(const std::string& slug) {
    return nyxid_->KeyBySlug(alice_, slug).value("id", "");
  }
  // One call through nyxid; every response is kept for the secrecy check.
  static http::ClientResponse Call(NyxidFixture& nyxid, const std::string& method,
                                   const std::string& path, const std::string& bearer,
                                   const std::string& body = "",
                                   std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::ClientResponse response = nyxid.Call(method, path, bearer, body, std::move(headers));
    seen_ += response.body;
    for (const auto& [name, value] : response.headers.fields()) seen_ += name + ": " + value + "\n";
    return response;
  }
  static std::string ProxyPath(const std::string& slug, const std::string& rest,
                               const std::string& via) {
    return "/api/v1/proxy/" + slug + rest + "?_nyxid_via=" + via;
  }
  static http::ClientResponse CallLlm(const std::string& bearer, const std::string& body,
                                      std::vector<std::pair<std::string, std::string>> headers = {},
                                      const std::string& rest = "/responses",
                                      const std::string& method = "POST") {
    return Call(*nyxid_, method, ProxyPath(kLlmSlug, rest, RouteId(kLlmSlug)), bearer, body,
                std::move(headers));
  }
  // A delegation token minted by nyxid for `slug`'s route, as its upstream
  // (the recorder) received it.
  static std::string MintDelegation(const std::string& slug) {
    auto response =
        Call(*nyxid_, "POST", ProxyPath(slug, "/codex/execute", RouteId(slug)), alice_, "{}");
    EXPECT_EQ(response.status, 200) << response.body;
    return upstream_->Requests().back().Header("X-NyxID-Delegation-Token");
  }
  // Fails when any header of `got` carries `secret` or a caller-side field.
  static void ExpectNoCallerCredential(const RecordedRequest& got, const std::string& secret) {
    for (const auto& [name, value] : got.headers) {
      const std::string lower = absl::AsciiStrToLower(name);
      EXPECT_FALSE(absl::StartsWith(lower, "x-nyxid")) << name;
      EXPECT_NE(lower, "cookie");
      EXPECT_EQ(value.find(secret), std::string::npos) << name;
    }
  }

  static RecordingUpstream* upstream_;
  static TempDir* key_dir_;
  static NyxidFixture* nyxid_;
  static std::string provider_key_;
  static std::string alice_;
  static std::string seen_;
};
RecordingUpstream* LlmProxy::upstream_ = nullptr;
TempDir* LlmProxy::key_dir_ = nullptr;
NyxidFixture* LlmProxy::nyxid_ = nullptr;
std::string LlmProxy::provider_key_;
std::string LlmProxy::alice_;
std::string LlmProxy::seen_;

TEST_F(LlmProxy, EveryCallerKindReachesTheProviderWithOnlyTheProviderKey) {
  const std::string delegation = MintDelegation("chrono-sandbox");
  ASSERT_FALSE(delegation.empty());
  const std::string agent_key =
      nyxid_->CreateAgentKey(alice_, "llm-caller", {RouteId(kLlmSlug)}).value("key", "");
  ASSERT_FALSE(agent_key.empty());
  for (const auto& [kind, bearer] : std::vector<std::pair<std::string, std::string>>{
           {"access token", alice_}, {"agent key", agent_key}, {"delegation token", delegation}}) {
    SCOPED_TRACE(kind);
    const size_t before = upstream_->Requests().size();
    auto response = CallLlm(bearer, kBody,
                            {{"Accept", "text/event-stream"},
                             {"X-NyxID-Delegation-Token", delegation},
                             {"X-NyxID-Forwarded-Token", bearer},
                             {"Cookie", "session=" + bearer}});
    ASSERT_EQ(response.status, 200) << response.body;
    EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "text/event-stream");
    EXPECT_EQ(response.body,
              std::string(RecordingUpstream::kFirstEvent) + RecordingUpstream::kSecondEvent);
    const std::vector<RecordedRequest> requests = upstream_->Requests();
    ASSERT_EQ(requests.size(), before + 1);
    const RecordedRequest& got = requests.back();
    EXPECT_EQ(got.method, "POST");
    EXPECT_EQ(got.target, "/v1/responses");
    EXPECT_EQ(got.body, kBody);
    EXPECT_EQ(got.Header("Authorization"), "Bearer " + provider_key_);
    EXPECT_EQ(got.Header("Accept"), "text/event-stream");
    ExpectNoCallerCredential(got, bearer);
    ExpectNoCallerCredential(got, delegation);
  }
}

TEST_F(LlmProxy, ARouteThatAsksToForwardCredentialsStillSendsOnlyTheProviderKey) {
  const size_t before = upstream_->Requests().size();
  auto response =
      Call(*nyxid_, "POST",
           ProxyPath("llm-forwarding", "/responses", RouteId("llm-forwarding")) + "&key=" + alice_,
           alice_, kBody);
  ASSERT_EQ(response.status, 200) << response.body;
  const std::vector<RecordedRequest> requests = upstream_->Requests();
  ASSERT_EQ(requests.size(), before + 1);
  EXPECT_EQ(requests.back().target, "/v1/responses");  // no caller query either
  EXPECT_EQ(requests.back().Header("Authorization"), "Bearer " + provider_key_);
  EXPECT_EQ(requests.back().Header("X-NyxID-Delegation-Token"), "");
  ExpectNoCallerCredential(requests.back(), alice_);
}

TEST_F(LlmProxy, OnlyPostResponsesWithAnAllowlistedModelIsForwarded) {
  const size_t before = upstream_->Requests().size();
  ExpectProblem(CallLlm(alice_, R"({"model":"gpt-other","input":"hi"})"), 403,
                "LLM_MODEL_NOT_ALLOWED");
  ExpectProblem(CallLlm(alice_, R"({"model":"GPT-DOUBLE-1","input":"hi"})"), 403,
                "LLM_MODEL_NOT_ALLOWED");
  for (const std::string& malformed :
       {std::string("not json"), std::string(R"({"input":"hi"})"), std::string(R"({"model":7})"),
        std::string(R"({"model":""})"), std::string(R"(["gpt-double-1"])"),
        std::string(R"({"model":"gpt-double-1")")}) {
    SCOPED_TRACE(malformed);
    ExpectProblem(CallLlm(alice_, malformed), 400, "LLM_REQUEST_INVALID");
  }
  ExpectProblem(CallLlm(alice_, kBody, {}, "/chat/completions"), 404, "LLM_ENDPOINT_NOT_FOUND");
  ExpectProblem(CallLlm(alice_, kBody, {}, "/responses/x"), 404, "LLM_ENDPOINT_NOT_FOUND");
  ExpectProblem(CallLlm(alice_, "", {}, "/responses", "GET"), 405, "LLM_METHOD_NOT_ALLOWED");
  ExpectProblem(CallLlm(alice_, kBody, {}, "/responses", "PUT"), 405, "LLM_METHOD_NOT_ALLOWED");
  EXPECT_EQ(upstream_->Requests().size(), before);  // none reached the provider
  // The error bodies do not echo the model or the body.
  EXPECT_EQ(seen_.find("gpt-other"), std::string::npos);
}

TEST_F(LlmProxy, ADelegationTokenCallsTheModelOnlyWithProxyScope) {
  const std::string with_proxy = MintDelegation("chrono-sandbox");
  const std::string without_proxy = MintDelegation("chrono-noproxy");
  ASSERT_FALSE(with_proxy.empty());
  ASSERT_FALSE(without_proxy.empty());
  EXPECT_EQ(CallLlm(with_proxy, kBody).status, 200);
  const size_t before = upstream_->Requests().size();
  ExpectProblem(CallLlm(without_proxy, kBody), 403, "TOKEN_SCOPE_MISSING");
  EXPECT_EQ(upstream_->Requests().size(), before);
}

// A delegation token is bound to its audience: chrono-sandbox's reaches the
// model (managed Codex), another service's does not, and chrono-sandbox's
// replayed against another route of its user is refused too.
TEST_F(LlmProxy, ADelegationTokenCallsOnlyRoutesThatAdmitItsAudience) {
  const std::string chrono = MintDelegation("chrono-sandbox");
  const std::string other = MintDelegation("other-service");
  ASSERT_FALSE(chrono.empty());
  ASSERT_FALSE(other.empty());
  EXPECT_EQ(CallLlm(chrono, kBody).status, 200);
  const size_t before = upstream_->Requests().size();
  ExpectProblem(CallLlm(other, kBody), 403, "DELEGATION_AUDIENCE_NOT_ALLOWED");
  ExpectProblem(Call(*nyxid_, "GET", ProxyPath("plain", "/x", RouteId("plain")), chrono), 403,
                "DELEGATION_AUDIENCE_NOT_ALLOWED");
  EXPECT_EQ(upstream_->Requests().size(), before);
  // The human who owns the routes still reaches the plain one.
  EXPECT_EQ(Call(*nyxid_, "GET", ProxyPath("plain", "/x", RouteId("plain")), alice_).status, 200);
}

TEST_F(LlmProxy, TheFirstEventReachesTheCallerBeforeTheProviderSendsTheNext) {
  upstream_->SetMode(RecordingUpstream::Mode::kLatched);
  http::ClientRequest request;
  request.method = "POST";
  request.url = nyxid_->url() + ProxyPath(kLlmSlug, "/responses", RouteId(kLlmSlug));
  request.headers.Set("Authorization", "Bearer " + alice_);
  request.headers.Set("Content-Type", "application/json");
  request.body = kBody;
  request.timeout = std::chrono::seconds(120);
  std::string received;
  auto response = http::FetchStreaming(request, nullptr, [&](std::string_view chunk) {
    received.append(chunk);
    // The provider is waiting for exactly this: the caller holding event one.
    if (received.find(RecordingUpstream::kFirstEvent) != std::string::npos) {
      upstream_->ContinueStream();
    }
    return true;
  });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(upstream_->ContinuedByTest())
      << "the proxy held the first event back until the provider went on by itself";
  EXPECT_EQ(received,
            std::string(RecordingUpstream::kFirstEvent) + RecordingUpstream::kSecondEvent);
}

TEST_F(LlmProxy, TheDefaultDeadlineIsTheIngressLayerOfTheChain) {
  // 180 s run < 300 s aevatar request < 315 s here < 330 s aevatar's client.
  EXPECT_NE(nyxid_->service().ReadLog().find("\"proxy_timeout_ms\":315000"), std::string::npos);
}

TEST_F(LlmProxy, AnOutOfRangeOrDoublyGivenDeadlineIsRefusedAtStart) {
  const std::string yaml = Bootstrap(upstream_->url(), key_dir_->path() + "/provider.key");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--proxy-timeout-ms", "0"},
        std::vector<std::string>{"--proxy-timeout-secs", "3601"},
        std::vector<std::string>{"--proxy-timeout-ms", "500", "--proxy-timeout-secs", "5"}}) {
    NyxidFixture refused(yaml, flags);
    EXPECT_FALSE(refused.ok()) << flags[0];
  }
}

TEST_F(LlmProxy, AnUpstreamSlowerThanTheScaledDeadlineGetsTheTypedTimeout) {
  NyxidFixture fast(Bootstrap(upstream_->url(), key_dir_->path() + "/provider.key"),
                    {"--proxy-timeout-ms", "400"});
  ASSERT_TRUE(fast.ok()) << fast.service().ReadLog();
  EXPECT_NE(fast.service().ReadLog().find("\"proxy_timeout_ms\":400"), std::string::npos);
  const std::string token = fast.Login("alice", kPassword);
  const std::string chrono = fast.KeyBySlug(token, "chrono-sandbox").value("id", "");
  const std::string llm = fast.KeyBySlug(token, kLlmSlug).value("id", "");
  ASSERT_FALSE(chrono.empty());
  ASSERT_FALSE(llm.empty());
  // The upstream answers nothing until the test has nyxid's answer in hand.
  upstream_->SetMode(RecordingUpstream::Mode::kHeld);
  auto sandbox = Call(fast, "POST", ProxyPath("chrono-sandbox", "/codex/execute", chrono), token,
                      R"({"prompt":"x"})");
  upstream_->ReleaseHeld();
  ExpectProblem(sandbox, 504, "PROXY_DEADLINE_EXCEEDED");
  upstream_->SetMode(RecordingUpstream::Mode::kHeld);
  auto model = Call(fast, "POST", ProxyPath(kLlmSlug, "/responses", llm), token, kBody);
  upstream_->ReleaseHeld();
  ExpectProblem(model, 504, "PROXY_DEADLINE_EXCEEDED");
}

TEST_F(LlmProxy, TheProviderKeyIsInNoResponseLogOrStateFile) {
  const std::string llm = RouteId(kLlmSlug);
  ASSERT_FALSE(llm.empty());
  const std::string agent_key = nyxid_->CreateAgentKey(alice_, "llm-secrecy").value("key", "");
  // Calls that succeed, fail at nyxid, and fail at the provider's deadline.
  EXPECT_EQ(CallLlm(alice_, kBody).status, 200);
  EXPECT_EQ(CallLlm(agent_key, kBody).status, 200);
  ExpectProblem(CallLlm(alice_, R"({"model":"gpt-other"})"), 403, "LLM_MODEL_NOT_ALLOWED");
  ExpectProblem(CallLlm(agent_key, "{"), 400, "LLM_REQUEST_INVALID");
  for (const std::string& path : {std::string("/api/v1/keys"), std::string("/api/v1/user-services"),
                                  "/api/v1/user-services/" + llm, std::string("/api/v1/catalog"),
                                  std::string("/api/v1/me"), std::string("/api/v1/agent-keys")}) {
    EXPECT_EQ(Call(*nyxid_, "GET", path, alice_).status, 200) << path;
    Call(*nyxid_, "GET", path, agent_key);  // inventory as an agent sees it (or its 403)
  }
  EXPECT_NE(seen_.find("\"kind\":\"llm\""), std::string::npos);  // the catalog was listed
  EXPECT_NE(seen_.find(RecordingUpstream::kSecondEvent), std::string::npos);
  EXPECT_EQ(seen_.find(provider_key_), std::string::npos);

  ASSERT_TRUE(nyxid_->service().WaitForSentinel("/api/v1/me"));
  const std::string log = nyxid_->service().ReadLog();
  EXPECT_NE(log.find("/api/v1/proxy/{slug}/{path...}"), std::string::npos);
  EXPECT_EQ(log.find(provider_key_), std::string::npos);

  // At rest: sealed in nyxid.db (and its WAL), nowhere in nyxid's files.
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(nyxid_->dir())) {
    if (!entry.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(ReadFile(entry.path()).find(provider_key_), std::string::npos) << entry.path();
  }
  EXPECT_GE(files, 3);  // bootstrap.yaml, nyxid.log, state/nyxid.db, …
}

}  // namespace
}  // namespace aevatar::testing
