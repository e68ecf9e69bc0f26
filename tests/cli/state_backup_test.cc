// aevatar backup / restore on a state directory (src/cli/state_backup.h):
// what is copied and what never is, the manifest's digests, and the refusals.
#include "cli/state_backup.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "os/atomic_file.h"
#include "store/sqlite_db.h"

namespace aevatar::cli {
namespace {

namespace fs = std::filesystem;

class StateBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "state_backup_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    state_ = root_ + "/state";
    backup_ = root_ + "/backup";
    // The layout of `aevatar up`, with one table per database.
    for (const char* dir : {"/nyxid", "/chrono-sandbox", "/aevatar"}) {
      ASSERT_TRUE(os::MakeDirectories(state_ + dir, 0700).ok());
    }
    Write("aevatar/vault.key", std::string(32, 'k'));
    Write("chrono-sandbox/at-rest.key", std::string(32, 'a'));
    Write("nyxid/signing-keys.json", "{\"private\":\"PLANTED-SIGNING-SECRET\"}");
    Write("credentials.json", "{\"password\":\"PLANTED-PASSWORD\"}");
    Write("bootstrap.yaml", "users: []\n");
    Write("chrono-sandbox/runner.id", std::string(16, 'r'));
    for (const char* db :
         {"nyxid/nyxid.db", "chrono-sandbox/operations.db", "aevatar/workflows.db"}) {
      auto opened = store::Database::Open(state_ + "/" + db);
      ASSERT_TRUE(opened.ok()) << opened.status();
      ASSERT_TRUE(opened->Exec("CREATE TABLE t(v TEXT); PRAGMA user_version = 4").ok());
      ASSERT_TRUE(opened->Run("INSERT INTO t(v) VALUES ('before')").ok());
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& bytes) {
    ASSERT_TRUE(os::WriteFileAtomically(state_ + "/" + relative, bytes, 0600).ok());
  }
  int64_t Rows(const std::string& db, const std::string& value) {
    auto opened = store::Database::Open(state_ + "/" + db);
    EXPECT_TRUE(opened.ok()) << opened.status();
    return opened->QueryInt64("SELECT count(*) FROM t WHERE v = ?1", {value}).value_or(-1);
  }
  void Insert(const std::string& db, const std::string& value) {
    auto opened = store::Database::Open(state_ + "/" + db);
    ASSERT_TRUE(opened.ok()) << opened.status();
    ASSERT_TRUE(opened->Run("INSERT INTO t(v) VALUES (?1)", {value}).ok());
  }

  std::string root_, state_, backup_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(StateBackupTest, CopiesEveryDatabaseAndRunnerIdButNoKey) {
  auto manifest = TakeBackup(state_, backup_);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  std::vector<std::string> copied;
  for (const ManifestEntry& entry : manifest->files) {
    copied.push_back(entry.path);
    EXPECT_TRUE(fs::exists(backup_ + "/" + entry.path)) << entry.path;
    if (entry.database) {
      EXPECT_EQ(entry.schema_version, 4) << entry.path;
    }
  }
  EXPECT_EQ(copied,
            (std::vector<std::string>{"aevatar/workflows.db", "chrono-sandbox/operations.db",
                                      "chrono-sandbox/runner.id", "nyxid/nyxid.db"}));
  std::vector<std::string> skipped;
  for (const NotCopied& file : manifest->not_copied) skipped.push_back(file.path);
  EXPECT_EQ(skipped, (std::vector<std::string>{"aevatar/vault.key", "bootstrap.yaml",
                                               "chrono-sandbox/at-rest.key", "credentials.json",
                                               "nyxid/signing-keys.json"}));
  // No key and no secret byte anywhere in the backup.
  for (const auto& file : fs::recursive_directory_iterator(backup_)) {
    if (!file.is_regular_file()) continue;
    const std::string bytes = ReadAll(file.path().string());
    EXPECT_EQ(bytes.find(std::string(32, 'k')), std::string::npos) << file.path();
    EXPECT_EQ(bytes.find("PLANTED-"), std::string::npos) << file.path();
  }
  auto verified = VerifyBackup(backup_);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->files.size(), manifest->files.size());
}

TEST_F(StateBackupTest, BackupWhileADatabaseIsOpenThenRestoreDropsLaterRows) {
  {
    auto service = store::Database::Open(state_ + "/aevatar/workflows.db");  // a running service
    ASSERT_TRUE(service.ok());
    ASSERT_TRUE(TakeBackup(state_, backup_).ok());
    ASSERT_TRUE(service->Run("INSERT INTO t(v) VALUES ('after')").ok());
  }
  Insert("nyxid/nyxid.db", "after");
  auto restored = RestoreBackup(backup_, state_);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(Rows("aevatar/workflows.db", "before"), 1);
  EXPECT_EQ(Rows("aevatar/workflows.db", "after"), 0);
  EXPECT_EQ(Rows("nyxid/nyxid.db", "after"), 0);
  // Keys stay as they were: the backup never held them.
  EXPECT_EQ(ReadAll(state_ + "/aevatar/vault.key"), std::string(32, 'k'));
}

TEST_F(StateBackupTest, RestoreIntoAnEmptyStateDirPutsBackDatabasesAndRunnerId) {
  ASSERT_TRUE(TakeBackup(state_, backup_).ok());
  const std::string fresh = root_ + "/fresh";
  auto restored = RestoreBackup(backup_, fresh);
  ASSERT_TRUE(restored.ok()) << restored.status();
  state_ = fresh;
  EXPECT_EQ(Rows("chrono-sandbox/operations.db", "before"), 1);
  EXPECT_EQ(ReadAll(fresh + "/chrono-sandbox/runner.id"), std::string(16, 'r'));
  EXPECT_FALSE(fs::exists(fresh + "/aevatar/vault.key"));
}

TEST_F(StateBackupTest, RefusesABackupDirThatIsNotEmptyOrInsideTheStateDir) {
  ASSERT_TRUE(os::MakeDirectories(backup_ + "-used", 0700).ok());
  ASSERT_TRUE(os::WriteFileAtomically(backup_ + "-used/old", "x", 0600).ok());
  auto used = TakeBackup(state_, backup_ + "-used");
  EXPECT_EQ(BackupErrorCode(used.status(), ""), kBackupDirNotEmpty);
  auto inside = TakeBackup(state_, state_ + "/backups/today");
  EXPECT_EQ(BackupErrorCode(inside.status(), ""), kBackupDirInStateDir);
  EXPECT_FALSE(fs::exists(state_ + "/backups"));
  auto missing = TakeBackup(root_ + "/no-such-state", backup_);
  EXPECT_EQ(BackupErrorCode(missing.status(), ""), kStateDirNotFound);
}

TEST_F(StateBackupTest, ATamperedCopyIsRefusedAndNothingIsRestored) {
  ASSERT_TRUE(TakeBackup(state_, backup_).ok());
  Insert("nyxid/nyxid.db", "after");
  {
    // Flip one byte of a page inside the copy; the manifest still has the old digest.
    std::fstream copy(backup_ + "/nyxid/nyxid.db", std::ios::in | std::ios::out | std::ios::binary);
    copy.seekp(200);
    copy.put('\x5a');
  }
  auto restored = RestoreBackup(backup_, state_);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(BackupErrorCode(restored.status(), ""), kDigestMismatch);
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Rows("nyxid/nyxid.db", "after"), 1);  // untouched
}

TEST_F(StateBackupTest, AMissingOrDamagedManifestIsRefused) {
  EXPECT_EQ(BackupErrorCode(RestoreBackup(root_ + "/nothing", state_).status(), ""),
            kBackupNotFound);
  ASSERT_TRUE(TakeBackup(state_, backup_).ok());
  std::string manifest = ReadAll(backup_ + "/manifest.json");
  const size_t at = manifest.find("\"aevatar/workflows.db\"");
  ASSERT_NE(at, std::string::npos);
  manifest.replace(at, 22, "\"../../etc/passwd.db\" ");
  ASSERT_TRUE(os::WriteFileAtomically(backup_ + "/manifest.json", manifest, 0600).ok());
  EXPECT_EQ(BackupErrorCode(RestoreBackup(backup_, state_).status(), ""), kManifestInvalid);
}

TEST_F(StateBackupTest, RestoreIsRefusedWhileAServiceHasADatabaseOpen) {
  ASSERT_TRUE(TakeBackup(state_, backup_).ok());
  Insert("chrono-sandbox/operations.db", "after");
  auto service = store::Database::Open(state_ + "/chrono-sandbox/operations.db");
  ASSERT_TRUE(service.ok());
  auto restored = RestoreBackup(backup_, state_);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(BackupErrorCode(restored.status(), ""), kStateDirInUse) << restored.status();
  EXPECT_EQ(service->QueryInt64("SELECT count(*) FROM t WHERE v = 'after'").value_or(-1), 1);
}

TEST_F(StateBackupTest, RestoreIsRefusedWhenTheStateHasADatabaseTheBackupLacks) {
  ASSERT_TRUE(TakeBackup(state_, backup_).ok());
  {
    auto later = store::Database::Open(state_ + "/aevatar/audit.db");
    ASSERT_TRUE(later.ok());
  }
  auto restored = RestoreBackup(backup_, state_);
  EXPECT_EQ(BackupErrorCode(restored.status(), ""), kStateNewerThanBackup);
}

TEST(BackupManifest, RoundTripsAndRejectsUnsafeOrMistypedFields) {
  BackupManifest manifest;
  manifest.created_at = "2026-12-02T11:00:00Z";
  manifest.files.push_back({"aevatar/workflows.db", true, 3, 4096, std::string(64, 'a')});
  manifest.files.push_back({"chrono-sandbox/runner.id", false, 0, 16, std::string(64, 'b')});
  manifest.not_copied.push_back({"aevatar/vault.key", "secret"});
  auto parsed = ParseManifest(ManifestJson(manifest));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->files.size(), 2u);
  EXPECT_EQ(parsed->files[0].schema_version, 3);
  EXPECT_TRUE(parsed->files[0].database);
  EXPECT_FALSE(parsed->files[1].database);
  EXPECT_EQ(parsed->not_copied[0].path, "aevatar/vault.key");

  const std::string entry_prefix =
      R"({"format":"aevatar-backup/1","files":[{"path":"a.db","kind":"sqlite","schema_version":1,)";
  for (
      const std::string& bad : {
          std::string(R"({"format":"aevatar-backup/9","files":[]})"),
          std::string(R"({"format":"aevatar-backup/1"})"),
          entry_prefix + R"("size":"1","sha256":")" + std::string(64, 'a') + "\"}]}",
          entry_prefix + R"("size":1,"sha256":"ABC"}]})",
          std::string(
              R"({"format":"aevatar-backup/1","files":[{"path":"/etc/x","kind":"file","size":1,"sha256":")") +
              std::string(64, 'a') + "\"}]}",
          std::string(
              R"({"format":"aevatar-backup/1","files":[{"path":"a/../../x","kind":"file","size":1,"sha256":")") +
              std::string(64, 'a') + "\"}]}",
          std::string(
              R"({"format":"aevatar-backup/1","files":[{"path":"a.db","kind":"exe","size":1,"sha256":")") +
              std::string(64, 'a') + "\"}]}",
      }) {
    EXPECT_FALSE(ParseManifest(bad).ok()) << bad;
  }
}

TEST(BackupManifest, KeysAreNeverCopiedAndSidecarsBelongToTheirDatabase) {
  struct Case {
    const char* path;
    bool sqlite;
    FileRole role;
  };
  for (const Case& c : {
           Case{"aevatar/workflows.db", true, FileRole::kDatabase},
           Case{"aevatar/workflows.db-wal", false, FileRole::kSidecar},
           Case{"aevatar/workflows.db-shm", false, FileRole::kSidecar},
           Case{"aevatar/vault.key", false, FileRole::kSecret},
           Case{"aevatar/vault.key.next", false, FileRole::kSecret},
           Case{"nyxid/at-rest.key", false, FileRole::kSecret},
           Case{"nyxid/signing-keys.json", false, FileRole::kSecret},
           Case{"credentials.json", false, FileRole::kSecret},
           Case{"chrono-sandbox/runner.id", false, FileRole::kPlainCopy},
           Case{"bootstrap.yaml", false, FileRole::kRegenerated},
           Case{"notes.txt", false, FileRole::kOther},
       }) {
    EXPECT_EQ(ClassifyStateFile(c.path, c.sqlite).role, c.role) << c.path;
  }
}

}  // namespace
}  // namespace aevatar::cli
