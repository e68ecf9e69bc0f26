// Where the vault key comes from: a file outside the state directory, the
// environment, or the state directory; never two places at once.
#include "aevatar/api/vault_key_source.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "aevatar/vault/key_rotation.h"
#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

class VaultKeySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vault_key_source_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    state_ = dir_ + "/state";
    std::filesystem::create_directories(state_);
    ::unsetenv(kVaultKeyEnv);
    ::unsetenv(kPreviousVaultKeyEnv);
  }
  void TearDown() override {
    ::unsetenv(kVaultKeyEnv);
    ::unsetenv(kPreviousVaultKeyEnv);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::string state_;
};

TEST_F(VaultKeySourceTest, TheEmbeddedDefaultKeepsTheKeyInTheStateDirectory) {
  auto key = LoadVaultKey("", state_);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->source, "state_dir");
  EXPECT_EQ(key->key.size(), 32u);
  auto again = LoadVaultKey("", state_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->key, key->key);
}

TEST_F(VaultKeySourceTest, AnExternalFileIsCreatedPrivateAndReused) {
  const std::string file = dir_ + "/vault.key";
  auto key = LoadVaultKey(file, state_);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->source, "file");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(state_ + "/vault.key"));
  EXPECT_EQ(LoadVaultKey(file, state_)->key, key->key);
  // A key readable by others is refused, not used.
  ::chmod(file.c_str(), 0644);
  EXPECT_FALSE(LoadVaultKey(file, state_).ok());
}

TEST_F(VaultKeySourceTest, TheEnvironmentHoldsSixtyFourHexDigits) {
  const std::string raw = base::RandomBytes(32);
  ::setenv(kVaultKeyEnv, base::HexEncode(raw).c_str(), 1);
  auto key = LoadVaultKey("", state_);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->source, "environment");
  EXPECT_EQ(key->key, raw);
  for (const std::string& bad : {std::string("abc"), std::string(64, 'z'), std::string(66, '0')}) {
    ::setenv(kVaultKeyEnv, bad.c_str(), 1);
    EXPECT_TRUE(absl::IsInvalidArgument(LoadVaultKey("", state_).status())) << bad;
  }
}

TEST_F(VaultKeySourceTest, AKeyLeftInTheStateDirectoryIsRefusedWhenAnotherIsConfigured) {
  ASSERT_TRUE(LoadVaultKey("", state_).ok());  // writes state/vault.key
  auto refused = LoadVaultKey(dir_ + "/elsewhere.key", state_);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
}

TEST_F(VaultKeySourceTest, AStagedKeySealsAndTheFilesKeyOnlyOpensUntilPromoted) {
  const std::string file = dir_ + "/vault.key";
  auto before = LoadVaultKey(file, state_);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->key_file, file);
  EXPECT_TRUE(before->retiring.empty());
  const std::string next = base::RandomBytes(32);
  ASSERT_TRUE(StageNextKey(file, next).ok());
  auto during = LoadVaultKey(file, state_);
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(during->key, next);
  EXPECT_EQ(during->retiring, before->key);
  // Promoted, with the staged copy not yet removed: no rotation is left.
  std::ofstream(file, std::ios::trunc | std::ios::binary) << next;
  auto after = LoadVaultKey(file, state_);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->key, next);
  EXPECT_TRUE(after->retiring.empty());
  // A staged file of the wrong size stops the start (fail closed).
  std::ofstream(StagedKeyPath(file), std::ios::trunc | std::ios::binary) << "short";
  EXPECT_TRUE(absl::IsDataLoss(LoadVaultKey(file, state_).status()));
}

TEST_F(VaultKeySourceTest, TheEnvironmentNamesThePreviousKeyOfARotation) {
  const std::string key = base::RandomBytes(32);
  const std::string previous = base::RandomBytes(32);
  ::setenv(kVaultKeyEnv, base::HexEncode(key).c_str(), 1);
  ::setenv(kPreviousVaultKeyEnv, base::HexEncode(previous).c_str(), 1);
  auto loaded = LoadVaultKey("", state_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->key, key);
  EXPECT_EQ(loaded->retiring, previous);
  EXPECT_TRUE(loaded->key_file.empty());
  ::setenv(kPreviousVaultKeyEnv, "nothex", 1);
  EXPECT_TRUE(absl::IsInvalidArgument(LoadVaultKey("", state_).status()));
}

}  // namespace
}  // namespace aevatar::orchestrator
