// `aevatar workflow triggers ID [--json]` against the three real binaries: it
// reads back what saving the workflow answered, shows a webhook's secret only
// with --json, and a workflow the caller does not have is a typed error.
#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kTriggerCliUsers[] = R"yaml(
users:
  - {username: erin, password: pw-erin}
user_services:
  - {owner: {user: erin}, catalog_service_id: chrono-sandbox}
)yaml";

constexpr char kTriggeredWorkflow[] = R"yaml(workflow_id: nightly-report
steps:
  - id: say
    tool: code_execute
    arguments: {language: bash, source: 'echo report'}
triggers:
  - cron: '30 2 * * *'
  - webhook: {}
)yaml";

TEST(AevatarTriggersCli, ListsWhatSavingAnsweredAndKeepsSecretsToJson) {
  AevatarStack stack(kTriggerCliUsers);
  ASSERT_TRUE(stack.ok());
  const std::string token = stack.Login("erin");
  ASSERT_FALSE(token.empty());
  auto saved = stack.Aevatar("POST", "/api/workflows", token,
                             json{{"workflow_yaml", kTriggeredWorkflow}}.dump());
  ASSERT_EQ(saved.status, 201) << saved.body;
  const json saved_triggers = JsonOf(saved).value("triggers", json::array());
  ASSERT_EQ(saved_triggers.size(), 2u) << saved.body;
  std::string hook_id;
  std::string secret;
  for (const json& trigger : saved_triggers) {
    if (trigger.value("kind", "") == "webhook") {
      hook_id = trigger.value("hook_id", "");
      secret = trigger.value("secret", "");
    }
  }
  ASSERT_FALSE(hook_id.empty());
  ASSERT_FALSE(secret.empty());

  TempDir home;
  const std::string cli = "env XDG_CONFIG_HOME='" + home.path() + "' AEVATAR_URL='" +
                          stack.aevatar().base_url() + "' AEVATAR_TOKEN='" + token + "' '" +
                          BinaryPath("aevatar") + "' workflow triggers ";

  const ShellRun as_json = RunShell(home.path(), cli + "nightly-report --json");
  ASSERT_EQ(as_json.exit_code, 0) << as_json.out << as_json.err;
  const json listed = json::parse(as_json.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(listed.is_object()) << as_json.out;
  EXPECT_EQ(listed.value("workflow_id", ""), "nightly-report");
  EXPECT_EQ(listed.value("triggers", json()), saved_triggers);

  const ShellRun text = RunShell(home.path(), cli + "nightly-report");
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("30 2 * * *"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(hook_id), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(secret), std::string::npos) << text.out;

  const ShellRun missing = RunShell(home.path(), cli + "no-such-workflow --json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(missing.out.empty()) << missing.out;
  EXPECT_NE(missing.err.find("diagnostic id: "), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace aevatar::testing
