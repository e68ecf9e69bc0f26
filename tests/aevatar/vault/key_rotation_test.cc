// The vault key rotation on a real state directory: every sealed column
// (credential vault, approvals, workflow material) moves to the new key while
// the stores stay open; an interrupted rotation resumes from the files; a
// value under neither key stops it with both keys kept; afterwards the old
// key opens nothing, not even in the files' free pages or write-ahead logs.
#include "aevatar/vault/key_rotation.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "aevatar/api/vault_key_source.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/vault/reseal.h"
#include "aevatar/vault/rotation_watcher.h"
#include "aevatar/vault/sealed_json.h"
#include "base/crypto.h"
#include "gtest/gtest.h"
#include "os/atomic_file.h"
#include "store/sqlite_db.h"
#include "testing/sealed_state.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kSecret[] = "PLANTED-rotation-secret-5d2";

using ::aevatar::testing::FileBytes;
using ::aevatar::testing::SealedValues;

class KeyRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/key_rotation_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    state_ = dir_ + "/state";
    key_file_ = dir_ + "/vault.key";
    std::filesystem::create_directories(state_);
    ::unsetenv(kVaultKeyEnv);
    old_key_ = base::RandomBytes(32);
    new_key_ = base::RandomBytes(32);
    ASSERT_TRUE(os::WriteFileAtomically(key_file_, old_key_, 0600).ok());
    Open(std::make_shared<VaultKeyring>(old_key_));
    // One value in each sealed column.
    ASSERT_TRUE(vault_->Store("alice-id", {"key-1", "route-1", kSecret, 1, 1}).ok());
    Approval approval;
    approval.id = "appr_1";
    approval.owner = "alice-id";
    approval.tool = "codex_exec";
    approval.call = {{"prompt", kSecret}};
    approval.created_at_ms = 1;
    approval.expires_at_ms = 2;
    ASSERT_TRUE(approvals_->Create(approval).ok());
    TurnCommit commit;
    commit.run_id = "run_1";
    RunRecord run{"run_1", "alice-id", "wf", "running", nlohmann::json::object(), 0, 1, 1};
    ASSERT_TRUE(workflows_
                    ->CreateRun(run, {0, "run_1", 1, "run.started", {}}, {"cb", "run_1", 1},
                                {{"mat_1", SealJson(*keyring_, {{"source", kSecret}})}})
                    .ok());
    before_ = SealedValues(state_);
    ASSERT_EQ(before_.size(), 3u);
  }
  void TearDown() override {
    Close();
    ::unsetenv(kVaultKeyEnv);
    std::filesystem::remove_all(dir_);
  }

  void Open(std::shared_ptr<VaultKeyring> keyring) {
    Close();
    keyring_ = std::move(keyring);
    auto vault = OpenSqliteCredentialVault(state_ + "/codex.db", keyring_);
    ASSERT_TRUE(vault.ok()) << vault.status();
    vault_ = std::move(*vault);
    auto approvals = OpenSqliteApprovalStore(state_ + "/approvals.db", keyring_);
    ASSERT_TRUE(approvals.ok()) << approvals.status();
    approvals_ = std::move(*approvals);
    auto workflows = OpenSqliteWorkflowStore(state_ + "/workflows.db");
    ASSERT_TRUE(workflows.ok()) << workflows.status();
    workflows_ = std::move(*workflows);
  }
  void Close() {
    vault_.reset();
    approvals_.reset();
    workflows_.reset();
  }

  // The stores read every planted value through the keyring.
  void ExpectAllServed() {
    auto credential = vault_->Load("alice-id");
    ASSERT_TRUE(credential.ok()) << credential.status();
    EXPECT_EQ((*credential)->secret, kSecret);
    auto approval = approvals_->Get("alice-id", "appr_1");
    ASSERT_TRUE(approval.ok()) << approval.status();
    EXPECT_EQ((*approval)->call["prompt"], kSecret);
    // A turn reads the sealed bytes, then opens them. Bytes read before the
    // sweep resealed them and opened after the retiring key was forgotten
    // fail that once; the turn is retried (with backoff) and reads again,
    // which must open.
    auto sealed = workflows_->GetSealed("mat_1");
    ASSERT_TRUE(sealed.ok()) << sealed.status();
    auto material = OpenSealedJson(*keyring_, *sealed, "material");
    if (!material.ok()) {
      sealed = workflows_->GetSealed("mat_1");
      ASSERT_TRUE(sealed.ok()) << sealed.status();
      material = OpenSealedJson(*keyring_, *sealed, "material");
    }
    ASSERT_TRUE(material.ok()) << material.status();
    EXPECT_EQ((*material)["source"], kSecret);
  }

  // After a finished rotation: each sealed value opens under the new key
  // alone, and no byte sequence sealed before the rotation is left anywhere
  // in the state directory (WAL and free pages included).
  void ExpectOldKeyOpensNothing() {
    for (const std::string& value : SealedValues(state_)) {
      EXPECT_FALSE(base::SecretBoxOpen(old_key_, value).ok());
      EXPECT_TRUE(base::SecretBoxOpen(new_key_, value).ok());
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(state_)) {
      const std::string bytes = FileBytes(entry.path().string());
      for (const std::string& old_value : before_) {
        EXPECT_EQ(bytes.find(old_value), std::string::npos) << entry.path();
      }
    }
  }

  std::string dir_, state_, key_file_, old_key_, new_key_;
  std::vector<std::string> before_;
  std::shared_ptr<VaultKeyring> keyring_;
  std::unique_ptr<ManagedCredentialVault> vault_;
  std::unique_ptr<ApprovalStore> approvals_;
  std::unique_ptr<WorkflowStore> workflows_;
};

TEST_F(KeyRotationTest, EverySealedColumnMovesToTheNewKeyWhileTheStoresStayOpen) {
  ASSERT_TRUE(keyring_->BeginRotation(new_key_).ok());
  ExpectAllServed();  // before any resealing: the old key still opens
  ASSERT_TRUE(ResealAll(state_, *keyring_, old_key_).ok());
  EXPECT_FALSE(keyring_->rotating());
  ExpectAllServed();
  ExpectOldKeyOpensNothing();
  // A store opened with the old key alone opens none of it.
  Open(std::make_shared<VaultKeyring>(old_key_));
  EXPECT_TRUE(absl::IsDataLoss(vault_->Load("alice-id").status()));
  EXPECT_TRUE(absl::IsDataLoss(approvals_->Get("alice-id", "appr_1").status()));
}

TEST_F(KeyRotationTest, AnInterruptedRotationResumesFromTheStagedKeyAndLosesNothing) {
  ASSERT_TRUE(StageNextKey(key_file_, new_key_).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(StageNextKey(key_file_, base::RandomBytes(32))));
  // The service took the staged key and resealed one column, then died.
  ASSERT_TRUE(keyring_->BeginRotation(new_key_).ok());
  ASSERT_EQ(ResealColumn(state_, kSealedColumns[0], *keyring_, old_key_)->resealed, 1);
  Close();

  // Start-up: the staged key seals, the file's key still opens.
  auto loaded = LoadVaultKey(key_file_, state_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->key, new_key_);
  EXPECT_EQ(loaded->retiring, old_key_);
  Open(std::make_shared<VaultKeyring>(loaded->key, loaded->retiring));
  ExpectAllServed();
  ASSERT_TRUE(ResealAll(state_, *keyring_, old_key_).ok());
  ASSERT_TRUE(PromoteStagedKey(key_file_, new_key_).ok());
  EXPECT_FALSE(std::filesystem::exists(StagedKeyPath(key_file_)));
  ExpectAllServed();
  ExpectOldKeyOpensNothing();

  // A restart with the promoted file alone serves everything.
  auto restarted = LoadVaultKey(key_file_, state_);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->key, new_key_);
  EXPECT_TRUE(restarted->retiring.empty());
  Open(std::make_shared<VaultKeyring>(restarted->key));
  ExpectAllServed();
}

TEST_F(KeyRotationTest, AValueUnderNeitherKeyStopsTheRotationWithBothKeysKept) {
  // An approval sealed under some third key (restored from elsewhere, say).
  VaultKeyring stranger(base::RandomBytes(32));
  {
    auto db = store::Database::Open(state_ + "/approvals.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Run("UPDATE approvals SET sealed_call = ?1 WHERE id = 'appr_1'",
                        {store::Blob(SealJson(stranger, {{"owner", "alice-id"}}))})
                    .ok());
  }
  ASSERT_TRUE(keyring_->BeginRotation(new_key_).ok());
  EXPECT_TRUE(absl::IsDataLoss(ResealAll(state_, *keyring_, old_key_)));
  EXPECT_TRUE(keyring_->rotating());  // the old key is not retired
  // What was resealed so far, and what was not, both still open.
  auto credential = vault_->Load("alice-id");
  ASSERT_TRUE(credential.ok()) << credential.status();
  auto sealed = workflows_->GetSealed("mat_1");
  ASSERT_TRUE(sealed.ok());
  EXPECT_TRUE(OpenSealedJson(*keyring_, *sealed, "material").ok());
}

TEST_F(KeyRotationTest, TheWatcherOfARunningServiceFindsTheStagedKeyAndPromotesIt) {
  RotationWatcher watcher({state_, key_file_, old_key_, "", absl::Milliseconds(10)},
                          keyring_.get());
  watcher.Start();
  ASSERT_TRUE(StageNextKey(key_file_, new_key_).ok());
  // Done when the staged file is gone (a bounded wait on an observable state).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::filesystem::exists(StagedKeyPath(key_file_)) &&
         std::chrono::steady_clock::now() < deadline) {
    ExpectAllServed();  // requests go on throughout
  }
  watcher.Stop();
  ASSERT_FALSE(std::filesystem::exists(StagedKeyPath(key_file_)));
  EXPECT_EQ(os::ReadPrivateFile(key_file_, 33).value_or(""), new_key_);
  EXPECT_FALSE(keyring_->rotating());
  ExpectAllServed();
  ExpectOldKeyOpensNothing();
}

}  // namespace
}  // namespace aevatar::orchestrator
