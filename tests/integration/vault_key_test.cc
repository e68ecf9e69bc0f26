// aevatar's vault key kept outside the state directory (--vault-key-file):
// everything works as before, and a copy of the state directory alone holds
// none of the secrets aevatar sealed (a workflow's source, the caller's
// Agent Key, a private_ssh prompt awaiting approval) in any of its files,
// write-ahead logs included.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "aevatar_stack.h"
#include "gtest/gtest.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kVaultUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(VaultKey, AStateDirectoryCopiedWithoutItsKeyRevealsNoSealedSecret) {
  TempDir keys;
  const std::string key_file = keys.path() + "/aevatar-vault.key";
  AevatarStack stack(kVaultUsers, {}, {"--vault-key-file", key_file});
  ASSERT_TRUE(stack.ok());
  const std::string human = stack.Login("alice");
  const std::string agent_key = stack.nyxid().CreateAgentKey(human, "vault-test").value("key", "");
  ASSERT_FALSE(agent_key.empty());

  // A workflow run as the Agent Key: its source and the key are sealed.
  const std::string yaml =
      "workflow_id: vault-check\nsteps:\n  - id: s\n    tool: code_execute\n    arguments:\n"
      "      language: bash\n      timeout_secs: 30\n"
      "      source: \"echo PLANTED-source-7c1 > /dev/null; echo done\"\n";
  auto started = stack.Aevatar("POST", "/api/workflow-runs", agent_key,
                               json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string run_id = JsonOf(started).value("run_id", "");
  json run = json::object();
  for (int i = 0; i < 600 && !run.value("done", false); ++i) {
    run = JsonOf(stack.Aevatar("GET", "/api/workflow-runs/" + run_id, agent_key));
    if (!run.value("done", false)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(run.value("status", ""), "succeeded") << run.dump();
  // A private_ssh call waiting for its approval: its prompt is sealed.
  const json call = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "box"}, {"principal", "alice"}}}}},
      {"prompt", "PLANTED-prompt-91d do something on my host"}};
  ASSERT_EQ(stack.Aevatar("POST", "/api/tools/codex_exec", human, call.dump()).status, 202);

  // The key is where it was put, and nowhere in the state directory.
  EXPECT_TRUE(std::filesystem::exists(key_file));
  const std::string state = stack.dir() + "/aevatar";
  EXPECT_FALSE(std::filesystem::exists(state + "/vault.key"));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(state)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    const std::string bytes = ReadAll(entry.path());
    for (const std::string& secret :
         {std::string("PLANTED-source-7c1"), agent_key, std::string("PLANTED-prompt-91d")}) {
      EXPECT_EQ(bytes.find(secret), std::string::npos)
          << entry.path() << " holds a sealed secret in the clear";
    }
  }
  EXPECT_GT(files, 3);
}

}  // namespace
}  // namespace aevatar::testing
