// aevatar doctor's state checks: the state directory and the vault key, read
// as the service would read them, and never created or changed.
#include "doctor/stack_checks.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace aevatar::doctor {
namespace {

namespace fs = std::filesystem;

class StackChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("AEVATAR_VAULT_KEY");
    std::string pattern = (fs::temp_directory_path() / "doctor-stack-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;  // mkdtemp makes it 0700
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs StackChecks(state_dir) and returns the result named `name`.
  static CheckResult Result(const std::string& state_dir, const std::string& name) {
    for (const CheckResult& result : RunChecks(StackChecks(state_dir)).checks) {
      if (result.name == name) return result;
    }
    ADD_FAILURE() << "no check " << name;
    return {};
  }
  void WriteKey(const std::string& bytes, fs::perms mode) {
    fs::create_directories(dir_ + "/aevatar");
    std::ofstream(dir_ + "/aevatar/vault.key", std::ios::binary) << bytes;
    fs::permissions(dir_ + "/aevatar/vault.key", mode);
  }

  std::string dir_;
};

TEST_F(StackChecksTest, FreshStateDirPassesAndNothingIsCreated) {
  const std::string state_dir = dir_ + "/not-yet";
  EXPECT_EQ(Result(state_dir, "state_dir").status, CheckStatus::kPass);
  EXPECT_EQ(Result(state_dir, "vault_key").status, CheckStatus::kPass);
  EXPECT_FALSE(fs::exists(state_dir));
}

TEST_F(StackChecksTest, StateDirOthersCanReadIsAWarning) {
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  const CheckResult result = Result(dir_, "state_dir");
  EXPECT_EQ(result.status, CheckStatus::kWarn);
  EXPECT_EQ(result.remediation, "chmod 0700 " + dir_);
}

TEST_F(StackChecksTest, StateDirThatIsAFileFails) {
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_EQ(Result(dir_ + "/file", "state_dir").status, CheckStatus::kFail);
}

TEST_F(StackChecksTest, TruncatedVaultKeyIsABlocker) {
  WriteKey("short", fs::perms::owner_read | fs::perms::owner_write);
  const Report report = RunChecks(StackChecks(dir_));
  EXPECT_FALSE(report.ok);
  const CheckResult result = Result(dir_, "vault_key");
  EXPECT_EQ(result.status, CheckStatus::kFail);
  EXPECT_NE(result.remediation.find("restore"), std::string::npos) << result.remediation;
}

TEST_F(StackChecksTest, ValidPrivateKeyPassesAndAReadableOneWarns) {
  WriteKey(std::string(32, 'k'), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Result(dir_, "vault_key").status, CheckStatus::kPass);
  fs::permissions(dir_ + "/aevatar/vault.key", fs::perms::others_read, fs::perm_options::add);
  const CheckResult result = Result(dir_, "vault_key");
  EXPECT_EQ(result.status, CheckStatus::kWarn);
  EXPECT_EQ(result.remediation, "chmod 0600 " + dir_ + "/aevatar/vault.key");
}

TEST_F(StackChecksTest, KeyInEnvironmentAndStateDirFails) {
  WriteKey(std::string(32, 'k'), fs::perms::owner_read | fs::perms::owner_write);
  ::setenv("AEVATAR_VAULT_KEY", std::string(64, 'a').c_str(), 1);
  const CheckResult result = Result(dir_, "vault_key");
  ::unsetenv("AEVATAR_VAULT_KEY");
  EXPECT_EQ(result.status, CheckStatus::kFail) << result.detail;
}

}  // namespace
}  // namespace aevatar::doctor
