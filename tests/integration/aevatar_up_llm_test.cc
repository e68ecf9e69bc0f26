// `aevatar up` with an https model provider behind a private CA: the
// embedded NyxID verifies it against --llm-ca-file, and managed codex_exec
// answers through it with the real Codex CLI (native backend). The provider
// is the responses-double (a TEST DOUBLE, in this process) behind a TLS front
// with the committed test PKI.
#include <sys/stat.h>

#include <fstream>

#include "doubles/responses_double.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"
#include "testing/tls_front.h"

namespace aevatar::testing {
namespace {

constexpr char kProviderKey[] = "provider-key-PLANTED-up-tls-77d1";
constexpr char kModel[] = "up-tls-double-model";

http::ClientResponse Call(const std::string& method, const std::string& url,
                          const std::string& bearer, const std::string& body) {
  http::ClientRequest request;
  request.method = method;
  request.url = url;
  request.body = body;
  request.timeout = std::chrono::seconds(120);
  request.headers.Set("Content-Type", "application/json");
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  auto response = http::Fetch(request);
  return response.ok() ? *response : http::ClientResponse{};
}

class AevatarUpLlm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/opt/aevatar/codex/bin/codex", X_OK) != 0) {
      GTEST_SKIP() << "the Codex CLI is not installed (scripts/setup)";
    }
    doubles::ResponsesDoubleOptions options;
    options.api_key = kProviderKey;
    auto model = doubles::ResponsesDouble::Start(options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = std::move(*model);
    front_ = std::make_unique<TlsFront>(model_->port(), TlsFront::Fixture("server.pem"),
                                        TlsFront::Fixture("server.key"));
    ASSERT_TRUE(front_->ok());
    key_file_ = dir_.path() + "/provider.key";
    std::ofstream(key_file_) << kProviderKey << "\n";
    ASSERT_EQ(::chmod(key_file_.c_str(), 0600), 0);
  }

  // `aevatar up` on an https upstream, plus `extra` flags; the canary's answer
  // (or the failure's body) through managed codex_exec as the demo user.
  std::string Canary(const std::string& name, std::vector<std::string> extra) {
    const std::string state = dir_.path() + "/" + name;
    const uint16_t base = PickFreePortRange(3);
    std::vector<std::string> argv = {
        BinaryPath("aevatar"), "up",
        "--state-dir",         state,
        "--port-base",         std::to_string(base),
        "--llm-upstream",      "https://127.0.0.1:" + std::to_string(front_->port()) + "/v1",
        "--llm-api-key-file",  key_file_,
        "--llm-model",         kModel,
        "--codex-backend",     "native"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ServiceProcess up(argv, dir_.path() + "/" + name + ".log");
    if (!up.ok()) return "aevatar up did not start: " + up.ReadLog();
    std::ifstream in(state + "/credentials.json");
    const nlohmann::json credentials = nlohmann::json::parse(in, nullptr, false);
    const std::string aevatar = credentials.value("aevatar_url", "");
    auto login = Call("POST", credentials.value("nyxid_url", "") + "/api/v1/auth/login", "",
                      nlohmann::json{{"username", "demo"},
                                     {"password", credentials["demo"].value("password", "")}}
                          .dump());
    const std::string token = JsonOf(login).value("access_token", "");
    auto ensured = Call("POST", aevatar + "/api/managed-codex/credential", token, "{}");
    if (ensured.status != 200) return "credential: " + ensured.body;
    const nlohmann::json args = {{"target", {{"kind", "managed_sandbox"}}},
                                 {"workspace", {{"kind", "empty_git"}}},
                                 {"prompt", "Reply with exactly UP_TLS_OK"}};
    auto reply = Call("POST", aevatar + "/api/tools/codex_exec", token, args.dump());
    if (reply.status != 200) return "codex_exec: " + reply.body;
    return JsonOf(reply).value("output", "");
  }

  TempDir dir_;
  std::unique_ptr<doubles::ResponsesDouble> model_;
  std::unique_ptr<TlsFront> front_;
  std::string key_file_;
};

TEST_F(AevatarUpLlm, AnHttpsProviderBehindAPrivateCaAnswersWithTheCaFile) {
  EXPECT_EQ(Canary("with-ca", {"--llm-ca-file", TlsFront::Fixture("ca.pem")}), "UP_TLS_OK");
  EXPECT_GT(front_->handshakes(), 0);
}

TEST_F(AevatarUpLlm, WithoutTheCaFileTheProviderIsNotTrustedAndNothingAnswers) {
  const std::string result = Canary("without-ca", {});
  EXPECT_NE(result, "UP_TLS_OK");
  EXPECT_EQ(result.find(kProviderKey), std::string::npos);
  // The TLS front saw connections whose handshake failed verification.
  EXPECT_EQ(front_->handshakes(), 0);
}

}  // namespace
}  // namespace aevatar::testing
