// store/sqlite_backup.h: the SQLite online backup and the exclusive lock that
// `aevatar backup` / `restore` use.
#include "store/sqlite_backup.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"
#include "testing/poll.h"

namespace aevatar::store {
namespace {

namespace fs = std::filesystem;

class SqliteBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sqlite_backup_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  // A WAL database with table t holding the values 1..rows.
  Database Seeded(const std::string& name, int rows) {
    absl::StatusOr<Database> db = Database::Open(PathOf(name));
    EXPECT_TRUE(db.ok()) << db.status();
    EXPECT_TRUE(db->Exec("CREATE TABLE t(v INTEGER NOT NULL); PRAGMA user_version = 7").ok());
    for (int i = 1; i <= rows; ++i) {
      EXPECT_TRUE(db->Run("INSERT INTO t(v) VALUES (?1)", {int64_t{i}}).ok());
    }
    return std::move(*db);
  }

  fs::path dir_;
};

int64_t Count(Database& db) {
  absl::StatusOr<int64_t> n = db.QueryInt64("SELECT count(*) FROM t");
  EXPECT_TRUE(n.ok()) << n.status();
  return n.value_or(-1);
}

TEST_F(SqliteBackupTest, BackupIsOneSelfContainedPrivateFileWithTheSchemaVersion) {
  Database live = Seeded("live.db", 5);
  ASSERT_TRUE(BackupDatabaseFile(PathOf("live.db"), PathOf("copy.db")).ok());
  EXPECT_FALSE(fs::exists(PathOf("copy.db-wal")));
  struct stat st {};
  ASSERT_EQ(::stat(PathOf("copy.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(SchemaVersionOfFile(PathOf("copy.db")).value_or(-1), 7);
  absl::StatusOr<Database> copy = Database::Open(PathOf("copy.db"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(Count(*copy), 5);
}

TEST_F(SqliteBackupTest, BackupNeverOverwritesAFile) {
  Database live = Seeded("live.db", 1);
  ASSERT_TRUE(BackupDatabaseFile(PathOf("live.db"), PathOf("copy.db")).ok());
  EXPECT_EQ(BackupDatabaseFile(PathOf("live.db"), PathOf("copy.db")).code(),
            absl::StatusCode::kAlreadyExists);
}

// The copy is one snapshot: every row a writer committed in one transaction
// is in it or none is, while the writer goes on without waiting.
TEST_F(SqliteBackupTest, BackupWhileAnotherConnectionWritesIsAConsistentSnapshot) {
  { Seeded("live.db", 0); }
  std::atomic<bool> stop{false};
  std::atomic<int> batches{0};
  std::thread writer([&] {
    absl::StatusOr<Database> db = Database::Open(PathOf("live.db"));
    ASSERT_TRUE(db.ok());
    while (!stop.load()) {
      absl::StatusOr<Transaction> tx = Transaction::Begin(*db);
      ASSERT_TRUE(tx.ok()) << tx.status();
      for (int i = 0; i < 10; ++i) ASSERT_TRUE(db->Run("INSERT INTO t(v) VALUES (1)").ok());
      ASSERT_TRUE(tx->Commit().ok());
      batches.fetch_add(1);
    }
  });
  // Stops and joins the writer on every way out, a failed assertion too.
  struct StopWriter {
    std::atomic<bool>& stop;
    std::thread& writer;
    ~StopWriter() {
      stop.store(true);
      if (writer.joinable()) writer.join();
    }
  } stop_writer{stop, writer};
  // The copies are taken while the writer commits, not before it starts.
  ASSERT_TRUE(testing::PollUntil([&] { return batches.load() > 0; }));
  for (int i = 0; i < 5; ++i) {
    const std::string copy_path = PathOf("copy" + std::to_string(i) + ".db");
    ASSERT_TRUE(BackupDatabaseFile(PathOf("live.db"), copy_path).ok());
    absl::StatusOr<Database> copy = Database::Open(copy_path);
    ASSERT_TRUE(copy.ok());
    EXPECT_EQ(Count(*copy) % 10, 0) << "a transaction was copied half-way";
  }
}

TEST_F(SqliteBackupTest, ExclusiveOpenIsRefusedWhileAnotherConnectionHasTheFileOpen) {
  Database live = Seeded("live.db", 1);
  absl::StatusOr<ExclusiveDatabase> exclusive = ExclusiveDatabase::Open(PathOf("live.db"), 200);
  ASSERT_FALSE(exclusive.ok());
  EXPECT_EQ(exclusive.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(exclusive.status().message().find("in use"), std::string::npos);
}

TEST_F(SqliteBackupTest, WhileHeldExclusivelyNobodyElseOpensTheFile) {
  { Seeded("live.db", 1); }
  absl::StatusOr<ExclusiveDatabase> exclusive = ExclusiveDatabase::Open(PathOf("live.db"), 200);
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  absl::StatusOr<Database> other = Database::Open(PathOf("live.db"), 200);
  EXPECT_FALSE(other.ok() && other->QueryInt64("SELECT count(*) FROM t").ok());
}

TEST_F(SqliteBackupTest, RestoreReplacesTheWholeContentAndTheServiceReopensIt) {
  {
    Database live = Seeded("live.db", 3);
    ASSERT_TRUE(BackupDatabaseFile(PathOf("live.db"), PathOf("copy.db")).ok());
    ASSERT_TRUE(live.Run("INSERT INTO t(v) VALUES (99)").ok());
    ASSERT_TRUE(live.Exec("CREATE TABLE later(x); PRAGMA user_version = 8").ok());
  }
  {
    absl::StatusOr<ExclusiveDatabase> target = ExclusiveDatabase::Open(PathOf("live.db"), 200);
    ASSERT_TRUE(target.ok()) << target.status();
    ASSERT_TRUE(target->RestoreFrom(PathOf("copy.db")).ok());
  }
  absl::StatusOr<Database> reopened = Database::Open(PathOf("live.db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(Count(*reopened), 3);
  EXPECT_EQ(reopened->QueryInt64("SELECT count(*) FROM t WHERE v = 99").value_or(-1), 0);
  EXPECT_EQ(SchemaVersion(*reopened).value_or(-1), 7);
  EXPECT_FALSE(reopened->QueryInt64("SELECT count(*) FROM later").ok());
}

TEST_F(SqliteBackupTest, RestoreIntoANewFileCreatesIt) {
  {
    Database live = Seeded("live.db", 2);
    ASSERT_TRUE(BackupDatabaseFile(PathOf("live.db"), PathOf("copy.db")).ok());
  }
  {
    absl::StatusOr<ExclusiveDatabase> target = ExclusiveDatabase::Open(PathOf("fresh.db"), 200);
    ASSERT_TRUE(target.ok()) << target.status();
    ASSERT_TRUE(target->RestoreFrom(PathOf("copy.db")).ok());
  }
  absl::StatusOr<Database> reopened = Database::Open(PathOf("fresh.db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(Count(*reopened), 2);
}

TEST_F(SqliteBackupTest, MissingFilesAreNotFound) {
  EXPECT_EQ(BackupDatabaseFile(PathOf("absent.db"), PathOf("copy.db")).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(SchemaVersionOfFile(PathOf("absent.db")).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<ExclusiveDatabase> target = ExclusiveDatabase::Open(PathOf("t.db"), 200);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->RestoreFrom(PathOf("absent.db")).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace aevatar::store
