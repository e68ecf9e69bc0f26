// The managed codex_exec canary as the spec runs it, under `aevatar up`: the
// skill aevatar-codex-exec-workflow-sample, published by `aevatar up`, is
// mounted with use_skill (mount_workflows) and its codex-exec-check workflow
// runs by id, never from a local YAML copy, and passes only on exactly
// CODEX_EXEC_READY. The model behind the real Codex CLI (native backend) is
// the responses-double, a TEST DOUBLE in this process.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "absl/strings/strip.h"
#include "doubles/responses_double.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "nyxid_fixture.h"
#include "service_process.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kProviderKey[] = "provider-key-PLANTED-skill-canary-51c0";

http::ClientResponse CallUp(const std::string& method, const std::string& url,
                            const std::string& bearer, const json& body = nullptr) {
  http::ClientRequest request;
  request.method = method;
  request.url = url;
  request.body = body.is_null() ? "" : body.dump();
  request.timeout = std::chrono::seconds(400);
  request.headers.Set("Content-Type", "application/json");
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  auto response = http::Fetch(request);
  return response.ok() ? *response : http::ClientResponse{};
}

TEST(AevatarSkillCanary, CodexExecCheckRunsFromTheMountedSkillAndReturnsExactlyReady) {
  if (::access("/opt/aevatar/codex/bin/codex", X_OK) != 0) {
    GTEST_SKIP() << "the Codex CLI is not installed (scripts/setup)";
  }
  doubles::ResponsesDoubleOptions options;
  options.api_key = kProviderKey;
  auto model = doubles::ResponsesDouble::Start(options);
  ASSERT_TRUE(model.ok()) << model.status();
  TempDir dir;
  const std::string key_file = dir.path() + "/provider.key";
  std::ofstream(key_file) << kProviderKey << "\n";
  ASSERT_EQ(::chmod(key_file.c_str(), 0600), 0);
  const std::string state = dir.path() + "/state";
  ServiceProcess up({BinaryPath("aevatar"), "up", "--state-dir", state, "--port-base",
                     std::to_string(PickFreePortRange(3)), "--llm-upstream",
                     "http://127.0.0.1:" + std::to_string((*model)->port()) + "/v1",
                     "--llm-api-key-file", key_file, "--llm-model", "skill-canary-double-model",
                     "--codex-backend", "native", "--skills-dir", AEVATAR_SOURCE_DIR "/skills"},
                    dir.path() + "/up.log");
  ASSERT_TRUE(up.ok()) << up.ReadLog();
  std::ifstream in(state + "/credentials.json");
  const json credentials = json::parse(in, nullptr, false);
  ASSERT_TRUE(credentials.is_object());
  const std::string aevatar = credentials.value("aevatar_url", "");
  const std::string token =
      JsonOf(
          CallUp("POST", credentials.value("nyxid_url", "") + "/api/v1/auth/login", "",
                 {{"username", "demo"}, {"password", credentials["demo"].value("password", "")}}))
          .value("access_token", "");
  ASSERT_FALSE(token.empty());

  // The spec's order: the credential, its readiness, then mount and run.
  auto ensured = CallUp("POST", aevatar + "/api/managed-codex/credential", token, json::object());
  ASSERT_EQ(ensured.status, 200) << ensured.body;
  const json status = JsonOf(CallUp("GET", aevatar + "/api/managed-codex/credential", token));
  ASSERT_TRUE(status.value("execution_ready", false)) << status.dump();
  auto used = CallUp("POST", aevatar + "/api/skills/use", token,
                     {{"skill", "aevatar-codex-exec-workflow-sample"}, {"mount_workflows", true}});
  ASSERT_EQ(used.status, 202) << used.body;
  json mount = JsonOf(used);
  for (int i = 0; i < 300 && !(mount.is_object() && mount.value("done", false)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    mount = JsonOf(CallUp("GET", aevatar + mount.value("status_url", "/none"), token));
  }
  ASSERT_EQ(mount.value("state", ""), "mounted") << mount.dump();

  auto started = CallUp("POST", aevatar + "/api/workflow-runs", token,
                        {{"workflow_id", "codex-exec-check"}, {"inputs", {{"prompt", ""}}}});
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_path = "/api/workflow-runs/" + JsonOf(started).value("run_id", "none");
  json run = json::object();
  for (int i = 0; i < 2000 && !(run.is_object() && run.value("done", false));
       ++i) {  // up to ~400 s on a loaded host
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    run = JsonOf(CallUp("GET", aevatar + run_path, token));
  }
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  const json& output = run["steps"][0]["output"];
  EXPECT_EQ(output.value("target", ""), "managed_sandbox");
  EXPECT_EQ(absl::StripAsciiWhitespace(output.value("output", "")), "CODEX_EXEC_READY");
  EXPECT_EQ(output.value("exit_code", -1), 0);
  EXPECT_FALSE(output.value("diagnostic_id", "").empty());
}

}  // namespace
}  // namespace aevatar::testing
