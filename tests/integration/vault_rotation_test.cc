// `aevatar vault rotate-key` against a running aevatar: sealed material of
// every kind (a workflow's source and the Agent Key that runs it, a
// private_ssh prompt awaiting approval) moves to a new key while a request
// loop that opens sealed material keeps succeeding; afterwards, in a copy of
// the state directory, the old key opens no sealed value and no value sealed
// before the rotation is left in any file; the new key serves everything,
// and so does a restart with only the new key.
#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "aevatar_stack.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "testing/sealed_state.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

constexpr char kRotationUsers[] = R"yaml(
users:
  - {username: alice, password: pw-alice}
user_services:
  - {owner: {user: alice}, catalog_service_id: chrono-sandbox}
)yaml";
constexpr char kSource[] = "PLANTED-rotation-source-2b8";
constexpr char kPrompt[] = "PLANTED-rotation-prompt-e41";

std::string CopyState(const std::string& state, const std::string& to) {
  std::filesystem::copy(state, to, std::filesystem::copy_options::recursive);
  return to;
}

// Starts a workflow whose source is planted (it sleeps `sleep_secs` first),
// as `credential`: its run id, or "" when the start failed.
std::string StartWorkflow(AevatarStack& stack, const std::string& credential,
                          const std::string& workflow_id, int sleep_secs = 0) {
  const std::string yaml = "workflow_id: " + workflow_id +
                           "\nsteps:\n  - id: s\n    tool: code_execute\n    arguments:\n"
                           "      language: bash\n      timeout_secs: 60\n"
                           "      source: \"sleep " +
                           std::to_string(sleep_secs) + "; echo " + std::string(kSource) +
                           " > /dev/null; echo done\"\n";
  auto started = stack.Aevatar("POST", "/api/workflow-runs", credential,
                               json{{"workflow_yaml", yaml}, {"wait", "none"}}.dump());
  return started.status == 202 ? JsonOf(started).value("run_id", "") : "";
}

// The run's document once `done(run)` holds (or after a minute).
json AwaitRun(AevatarStack& stack, const std::string& credential, const std::string& run_id,
              const std::function<bool(const json&)>& done) {
  json run = json::object();
  for (int i = 0; i < 600; ++i) {
    run = JsonOf(stack.Aevatar("GET", "/api/workflow-runs/" + run_id, credential));
    if (done(run)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return run;
}

// Runs a workflow whose source is planted, as `credential`; its status.
std::string RunWorkflow(AevatarStack& stack, const std::string& credential,
                        const std::string& workflow_id) {
  const std::string run_id = StartWorkflow(stack, credential, workflow_id);
  if (run_id.empty()) return "start failed";
  return AwaitRun(stack, credential, run_id,
                  [](const json& run) { return run.value("done", false); })
      .value("status", "");
}

TEST(VaultRotation, ARunningAevatarMovesEverythingToTheNewKeyAndTheOldOneOpensNothing) {
  TempDir keys;
  const std::string key_file = keys.path() + "/aevatar-vault.key";
  AevatarStack stack(kRotationUsers, {}, {"--vault-key-file", key_file});
  ASSERT_TRUE(stack.ok());
  const std::string human = stack.Login("alice");
  const std::string agent_key = stack.nyxid().CreateAgentKey(human, "rotation").value("key", "");
  ASSERT_FALSE(agent_key.empty());
  ASSERT_EQ(RunWorkflow(stack, agent_key, "before-rotation"), "succeeded");
  // A run still going through the rotation (a finished run's material is
  // deleted): its definition, the Agent Key it runs as and its step's
  // request (the planted source) are sealed meanwhile, and the turn that
  // stops it afterwards opens the key under the new vault key.
  const std::string live = StartWorkflow(stack, agent_key, "during-rotation", /*sleep_secs=*/50);
  ASSERT_FALSE(live.empty());
  const json submitted = AwaitRun(stack, agent_key, live, [](const json& run) {
    const json& steps = run.contains("steps") ? run["steps"] : json::array();
    return run.value("done", false) ||
           (!steps.empty() && steps[0].value("status", "") == "running");
  });
  ASSERT_FALSE(submitted.value("done", false)) << submitted.dump();
  const json call = {
      {"target",
       {{"kind", "private_ssh"}, {"private_ssh", {{"service", "box"}, {"principal", "alice"}}}}},
      {"prompt", kPrompt}};
  auto pending = stack.Aevatar("POST", "/api/tools/codex_exec", human, call.dump());
  ASSERT_EQ(pending.status, 202) << pending.body;
  const std::string approval_id = JsonOf(pending).value("approval_id", "");
  ASSERT_FALSE(approval_id.empty()) << pending.body;
  const std::string state = stack.dir() + "/aevatar";
  const std::string old_key = FileBytes(key_file);
  ASSERT_EQ(old_key.size(), 32u);
  const std::vector<std::string> before = SealedValues(CopyState(state, keys.path() + "/before"));
  ASSERT_GE(before.size(), 3u);  // the definition, the Agent Key, the prompt (and material)

  // A request loop that opens sealed material (the approval's call) runs
  // throughout the rotation.
  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::atomic<int> failed{0};
  std::thread loop([&] {
    while (!stop.load()) {
      auto got = stack.Aevatar("GET", "/api/approvals/" + approval_id, human);
      const bool ok = got.status == 200 && got.body.find(kPrompt) != std::string::npos;
      ++(ok ? served : failed);
    }
  });
  const ShellRun rotated =
      RunShell(keys.path(), "'" + BinaryPath("aevatar") + "' vault rotate-key --vault-key-file '" +
                                key_file + "' --wait-secs 120");
  stop = true;
  loop.join();
  ASSERT_EQ(rotated.exit_code, 0) << rotated.out << rotated.err;
  EXPECT_GT(served.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  const std::string new_key = FileBytes(key_file);
  ASSERT_EQ(new_key.size(), 32u);
  EXPECT_NE(new_key, old_key);
  EXPECT_FALSE(std::filesystem::exists(key_file + ".next"));

  // A copy of the state directory: the old key opens nothing in it, and no
  // value sealed before the rotation (nor a planted secret) is in any file.
  const std::string copy = CopyState(state, keys.path() + "/after");
  const std::vector<std::string> after = SealedValues(copy);
  EXPECT_GE(after.size(), before.size());
  for (const std::string& value : after) {
    EXPECT_FALSE(base::SecretBoxOpen(old_key, value).ok());
    EXPECT_TRUE(base::SecretBoxOpen(new_key, value).ok());
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(copy)) {
    if (!entry.is_regular_file()) continue;
    const std::string bytes = FileBytes(entry.path().string());
    for (const std::string& secret : {std::string(kSource), std::string(kPrompt), agent_key}) {
      EXPECT_EQ(bytes.find(secret), std::string::npos) << entry.path() << " holds a secret";
    }
    for (const std::string& old_value : before) {
      EXPECT_EQ(bytes.find(old_value), std::string::npos) << entry.path() << " kept old ciphertext";
    }
  }

  // The new key serves everything, before and after a restart with it alone.
  EXPECT_EQ(stack.Aevatar("POST", "/api/workflow-runs/" + live + "/stop", agent_key, "{}").status,
            202);
  const json stopped =
      AwaitRun(stack, agent_key, live, [](const json& run) { return run.value("done", false); });
  EXPECT_EQ(stopped.value("status", ""), "stopped") << stopped.dump();
  EXPECT_EQ(stopped["steps"][0].value("outcome_code", ""), "code_execution_cancelled");
  EXPECT_EQ(RunWorkflow(stack, agent_key, "after-rotation"), "succeeded");
  stack.RestartAevatar(/*hard=*/false);
  auto approval = stack.Aevatar("GET", "/api/approvals/" + approval_id, human);
  EXPECT_EQ(approval.status, 200) << approval.body;
  EXPECT_NE(approval.body.find(kPrompt), std::string::npos);
  EXPECT_EQ(RunWorkflow(stack, agent_key, "after-restart"), "succeeded");
}

}  // namespace
}  // namespace aevatar::testing
