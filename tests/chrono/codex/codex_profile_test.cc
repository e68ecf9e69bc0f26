#include "chrono/codex/codex_profile.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace aevatar::chrono {
namespace {

TEST(CodexProfile, ScriptEndsInExactlyTheFixedCommandReadingThePromptFromStdin) {
  const std::string script = kCodexRunScript;
  const std::string command = "\nexec codex --ask-for-approval never exec --ephemeral --json -\n";
  ASSERT_GE(script.size(), command.size());
  EXPECT_EQ(script.substr(script.size() - command.size()), command);
  EXPECT_NE(script.find("\nprintf 'ref: refs/heads/main\\n' > .git/HEAD\n"), std::string::npos);
  EXPECT_NE(script.find("\nprintf '.aevatar/\\n' > .git/info/exclude\n"), std::string::npos);
  // No caller text is ever interpolated: the script has no variable but the
  // config and $0 (itself).
  for (size_t at = script.find('$'); at != std::string::npos; at = script.find('$', at + 1)) {
    const std::string rest = script.substr(at, 22);
    EXPECT_TRUE(rest.rfind("$0", 0) == 0 || rest.rfind("$AEVATAR_CODEX_CONFIG", 0) == 0) << rest;
  }
}

TEST(CodexProfile, ConfigFixesProviderModelRetriesAndPolicies) {
  const std::string toml = CodexConfigToml("gpt-test", 40123);
  for (const char* line : {
           "model = \"gpt-test\"\n",
           "model_provider = \"nyxid\"\n",
           "approval_policy = \"never\"\n",
           "sandbox_mode = \"danger-full-access\"\n",
           "base_url = \"http://127.0.0.1:40123/v1\"\n",
           "wire_api = \"responses\"\n",
           "env_key = \"NYXID_LLM_TOKEN\"\n",
           "request_max_retries = 1\n",
           "stream_max_retries = 1\n",
           "[features]\nplugins = false\nunbounded_connection_retries = false\n",
           "[analytics]\nenabled = false\n",
           "[shell_environment_policy]\nexclude = [\"NYXID_*\"]\n",
       }) {
    EXPECT_NE(toml.find(line), std::string::npos) << line;
  }
  // A `profile` key is a hard error in Codex 0.171.0.
  EXPECT_EQ(toml.find("profile ="), std::string::npos);
}

TEST(CodexProfile, ModelNamesThatNeedEscapingAreRefused) {
  EXPECT_TRUE(ValidateCodexModelName("gpt-5.1-codex").ok());
  EXPECT_TRUE(ValidateCodexModelName("org/model:v2").ok());
  for (const char* bad : {"", "a\"b", "a b", "a\nb", "a\\b", "m]"}) {
    EXPECT_FALSE(ValidateCodexModelName(bad).ok()) << bad;
  }
  EXPECT_FALSE(ValidateCodexModelName(std::string(129, 'm')).ok());
}

TEST(CodexProfile, RunSpecCarriesThePromptAsDataAndTheTokenOnlyAsServerEnv) {
  CodexRunInput input;
  input.codex_host_path = "/opt/aevatar/codex/bin/codex";
  input.model = "m";
  input.relay_port = 5;
  input.prompt = "--model evil -c sandbox_mode=x\n$(touch /tmp/x)";
  input.token = "TOKEN-VALUE";
  input.timeout_secs = 42;
  const sandbox::RunSpec spec = BuildCodexRunSpec(input);
  EXPECT_EQ(spec.language, sandbox::Language::kBash);
  EXPECT_EQ(spec.source, kCodexRunScript);
  EXPECT_EQ(spec.stdin_data, input.prompt);
  EXPECT_TRUE(spec.env.empty());
  int token_vars = 0;
  for (const auto& var : spec.server_env) {
    if (var.value == "TOKEN-VALUE") {
      EXPECT_EQ(var.name, "NYXID_LLM_TOKEN");
      ++token_vars;
    }
  }
  EXPECT_EQ(token_vars, 1);
  ASSERT_EQ(spec.server_files.size(), 2u);
  EXPECT_EQ(spec.server_files[0].sandbox_path, kSandboxCodexPath);
  EXPECT_EQ(spec.server_files[1].host_path, "/bin/false");
  EXPECT_EQ(spec.server_files[1].sandbox_path, kSandboxLsbReleasePath);
  EXPECT_EQ(spec.limits.wall_timeout_secs, 42);
  EXPECT_GE(spec.limits.max_pids, 256u);
  EXPECT_GE(spec.limits.memory_bytes, 512ull << 20);
}

TEST(CodexProfile, AHomeTemplateIsWrittenReadOnlyAndUnpackedBeforeCodexStarts) {
  CodexRunInput input;
  input.codex_host_path = "/opt/aevatar/codex/bin/codex";
  input.model = "m";
  EXPECT_EQ(BuildCodexRunSpec(input).server_files.size(), 2u);
  input.home_template = std::make_shared<const std::string>("tar bytes");
  const sandbox::RunSpec spec = BuildCodexRunSpec(input);
  ASSERT_EQ(spec.server_files.size(), 3u);
  EXPECT_EQ(spec.server_files[2].sandbox_path, kSandboxHomeTemplatePath);
  EXPECT_TRUE(spec.server_files[2].host_path.empty());
  EXPECT_EQ(spec.server_files[2].contents, input.home_template);
  const std::string script = kCodexRunScript;
  const size_t unpack = script.find(absl::StrCat("tar -xf ", kSandboxHomeTemplatePath));
  ASSERT_NE(unpack, std::string::npos);
  EXPECT_LT(unpack, script.find("exec codex"));
}

}  // namespace
}  // namespace aevatar::chrono
