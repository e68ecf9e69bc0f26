// The aevatar commands that work on this host's files, with --json: one JSON
// document on stdout (the backup manifest; the vault rotation's state, never
// a key), and a refusal is a problem object with a typed code and a null
// diagnostic id (no server was asked).
#include <sys/stat.h>

#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "service_process.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

struct LocalJsonRun {
  ShellRun run;
  json document;  // stdout as one JSON document (discarded if it is not)
};

LocalJsonRun AevatarJson(const TempDir& dir, const std::string& args) {
  LocalJsonRun result;
  result.run = RunShell(dir.path(), "'" + BinaryPath("aevatar") + "' " + args + " --json");
  result.document = json::parse(result.run.out, nullptr, /*allow_exceptions=*/false);
  return result;
}

void ExpectLocalProblem(const LocalJsonRun& failed) {
  EXPECT_NE(failed.run.exit_code, 0) << failed.run.out;
  ASSERT_TRUE(failed.document.is_object()) << "stdout: " << failed.run.out;
  ASSERT_TRUE(failed.document["code"].is_string()) << failed.run.out;
  EXPECT_FALSE(failed.document["code"].get<std::string>().empty());
  ASSERT_TRUE(failed.document.contains("diagnostic_id")) << failed.run.out;
  EXPECT_TRUE(failed.document["diagnostic_id"].is_null()) << failed.run.out;
}

TEST(CliLocalJson, BackupAndRestorePrintTheManifest) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
  std::ofstream(state + "/vault.key") << std::string(32, 'k');

  const LocalJsonRun backup =
      AevatarJson(dir, "backup --state-dir '" + state + "' --to '" + dir.path() + "/b1'");
  ASSERT_EQ(backup.run.exit_code, 0) << backup.run.out << backup.run.err;
  ASSERT_TRUE(backup.document.is_object()) << backup.run.out;
  EXPECT_TRUE(backup.document["files"].is_array()) << backup.run.out;
  ASSERT_TRUE(backup.document["not_copied"].is_array()) << backup.run.out;
  EXPECT_NE(backup.run.out.find("vault.key"), std::string::npos);  // listed, not copied
  EXPECT_EQ(backup.run.out.find(std::string(32, 'k')), std::string::npos);

  const LocalJsonRun restore = AevatarJson(
      dir, "restore --from '" + dir.path() + "/b1' --state-dir '" + dir.path() + "/restored'");
  ASSERT_EQ(restore.run.exit_code, 0) << restore.run.out << restore.run.err;
  EXPECT_EQ(restore.document["files"], backup.document["files"]) << restore.run.out;

  // The backup directory is not empty any more: refused, typed.
  ExpectLocalProblem(
      AevatarJson(dir, "backup --state-dir '" + state + "' --to '" + dir.path() + "/b1'"));
}

TEST(CliLocalJson, VaultRotateKeySaysWhatItStagedNeverTheKey) {
  TempDir dir;
  const std::string key_file = dir.path() + "/vault.key";
  std::ofstream(key_file) << std::string(32, 'o');
  ASSERT_EQ(::chmod(key_file.c_str(), 0600), 0);
  const std::string new_key_file = dir.path() + "/vault.key.new";
  std::ofstream(new_key_file) << std::string(32, 'n');
  ASSERT_EQ(::chmod(new_key_file.c_str(), 0600), 0);

  const LocalJsonRun staged =
      AevatarJson(dir, "vault rotate-key --vault-key-file '" + key_file + "' --new-key-file '" +
                           new_key_file + "' --wait-secs 0");
  ASSERT_EQ(staged.run.exit_code, 0) << staged.run.out << staged.run.err;
  ASSERT_TRUE(staged.document.is_object()) << staged.run.out;
  EXPECT_EQ(staged.document.value("key_file", ""), key_file);
  EXPECT_EQ(staged.document.value("rotated", true), false);
  EXPECT_FALSE(staged.document.value("staged", "").empty());
  EXPECT_EQ(staged.run.out.find(std::string(32, 'n')), std::string::npos);

  ExpectLocalProblem(AevatarJson(dir, "vault rotate-key --wait-secs 0"));  // neither file nor dir
}

// `aevatar exec` refuses a program that is not UTF-8 before it asks any
// server (its request is JSON): a clear error and exit 2, not a crash.
TEST(CliLocalJson, ExecRefusesAProgramThatIsNotUtf8) {
  TempDir dir;
  std::ofstream(dir.path() + "/latin1.py", std::ios::binary) << "print('\xe9')\n";
  const ShellRun run =
      RunShell(dir.path(), "'" + BinaryPath("aevatar") +
                               "' exec --url http://127.0.0.1:1 --language python --file " +
                               dir.path() + "/latin1.py");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("UTF-8"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace aevatar::testing
