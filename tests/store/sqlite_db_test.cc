#include "store/sqlite_db.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "store/migrations.h"

namespace aevatar::store {
namespace {

namespace fs = std::filesystem;

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sqlite_db_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  Database OpenOrDie(const std::string& name = "test.db") {
    absl::StatusOr<Database> db = Database::Open(PathOf(name));
    EXPECT_TRUE(db.ok()) << db.status();
    return std::move(*db);
  }

  fs::path dir_;
};

int64_t QueryInt(Database& db, const std::string& sql) {
  absl::StatusOr<Statement> stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->ColumnInt64(0);
}

std::string QueryText(Database& db, const std::string& sql) {
  absl::StatusOr<Statement> stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->ColumnText(0);
}

TEST_F(SqliteDbTest, OpenEnablesWalFullSyncAndForeignKeys) {
  Database db = OpenOrDie();
  EXPECT_EQ(QueryText(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryInt(db, "PRAGMA synchronous"), 2);  // FULL
  EXPECT_EQ(QueryInt(db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(QueryInt(db, "PRAGMA busy_timeout"), Database::kDefaultBusyTimeoutMs);
}

TEST_F(SqliteDbTest, CreatedFileIsOwnerOnly) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (x INTEGER)").ok());
  const fs::perms perms = fs::status(PathOf("test.db")).permissions();
  EXPECT_EQ(perms & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SqliteDbTest, OpenInMissingDirectoryIsUnavailableAndNamesPath) {
  absl::StatusOr<Database> db = Database::Open(PathOf("no/such/dir/x.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kUnavailable) << db.status();
  EXPECT_NE(db.status().message().find("x.db"), absl::string_view::npos) << db.status();
}

TEST_F(SqliteDbTest, BindAndColumnRoundTripEveryType) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n TEXT)").ok());
  const std::string text("json \"with\" a \0 NUL", 19);
  const std::string blob("\x00\xff\x01sealed", 9);
  {
    absl::StatusOr<Statement> insert = db.Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
    ASSERT_TRUE(insert.ok()) << insert.status();
    ASSERT_TRUE(insert->BindInt64(1, std::numeric_limits<int64_t>::min()).ok());
    ASSERT_TRUE(insert->BindDouble(2, 0.25).ok());
    ASSERT_TRUE(insert->BindText(3, text).ok());
    ASSERT_TRUE(insert->BindBlob(4, blob).ok());
    ASSERT_TRUE(insert->BindNull(5).ok());
    ASSERT_TRUE(insert->Run().ok());
    // Reuse with new bindings: empty text and blob stay empty, not NULL.
    insert->Reset();
    ASSERT_TRUE(insert->BindInt64(1, std::numeric_limits<int64_t>::max()).ok());
    ASSERT_TRUE(insert->BindText(3, "").ok());
    ASSERT_TRUE(insert->BindBlob(4, "").ok());
    ASSERT_TRUE(insert->Run().ok());
  }
  absl::StatusOr<Statement> select = db.Prepare("SELECT i, d, s, b, n FROM t ORDER BY i");
  ASSERT_TRUE(select.ok()) << select.status();
  absl::StatusOr<bool> row = select->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(select->ColumnDouble(1), 0.25);
  EXPECT_EQ(select->ColumnText(2), text);
  EXPECT_EQ(select->ColumnBlob(3), blob);
  EXPECT_TRUE(select->ColumnIsNull(4));
  EXPECT_FALSE(select->ColumnIsNull(3));
  row = select->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(select->ColumnIsNull(1));  // cleared by Reset()
  EXPECT_FALSE(select->ColumnIsNull(2));
  EXPECT_FALSE(select->ColumnIsNull(3));
  EXPECT_EQ(select->ColumnText(2), "");
  row = select->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST_F(SqliteDbTest, ValueListsBindInOrderAndRunCountsChanges) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (i INTEGER, s TEXT, b BLOB) STRICT").ok());
  const std::string name = "a";
  for (int64_t i : {1, 2, 3}) {
    absl::StatusOr<int64_t> inserted =
        db.Run("INSERT INTO t VALUES (?1, ?2, ?3)", {i, name, Blob("\x01")});
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    EXPECT_EQ(*inserted, 1);
  }
  // STRICT rejects a blob in a TEXT column: Blob really binds as BLOB.
  EXPECT_FALSE(db.Run("INSERT INTO t VALUES (?1, ?2, ?3)", {4, Blob("x"), Blob("y")}).ok());
  EXPECT_EQ(*db.Run("UPDATE t SET s = ?1 WHERE i >= ?2", {"b", 2}), 2);
  EXPECT_EQ(*db.QueryInt64("SELECT COUNT(*) FROM t WHERE s = ?1 AND typeof(b) = 'blob'", {"b"}), 2);
  EXPECT_EQ(db.QueryInt64("SELECT i FROM t WHERE i > ?1", {99}).status().code(),
            absl::StatusCode::kNotFound);
  // More values than placeholders is an error, not silently ignored.
  EXPECT_EQ(db.Run("DELETE FROM t WHERE i = ?1", {1, 2}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteDbTest, ErrorNamesTheStatementButNotTheBoundValue) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (k TEXT UNIQUE)").ok());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Statement> insert = db.Prepare("INSERT INTO t (k) VALUES (?1)");
    ASSERT_TRUE(insert.ok());
    ASSERT_TRUE(insert->BindText(1, "s3cr3t-idempotency-key").ok());
    absl::Status s = insert->Run();
    if (i == 0) {
      ASSERT_TRUE(s.ok()) << s;
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
    EXPECT_NE(s.message().find("INSERT INTO t"), absl::string_view::npos) << s;
    EXPECT_EQ(s.message().find("s3cr3t"), absl::string_view::npos) << s;
  }
}

TEST_F(SqliteDbTest, RunRejectsAStatementThatYieldsRows) {
  Database db = OpenOrDie();
  absl::StatusOr<Statement> stmt = db.Prepare("SELECT 1");
  ASSERT_TRUE(stmt.ok());
  EXPECT_EQ(stmt->Run().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(db.Prepare("SELEC nonsense").status().code(), absl::StatusCode::kInternal);
}

// Statements are kept compiled between uses; what comes back from the
// cache must behave like a fresh compilation.
TEST_F(SqliteDbTest, AReusedStatementHasNoOpenReadAndNoOldBindings) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)").ok());
  {
    absl::StatusOr<Statement> read = db.Prepare("SELECT x FROM t WHERE x >= ?1", {int64_t{1}});
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_TRUE(*read->Step());  // left mid-read: a row is still pending
  }
  {
    absl::StatusOr<Statement> again = db.Prepare("SELECT x FROM t WHERE x >= ?1");
    ASSERT_TRUE(again.ok()) << again.status();
    absl::StatusOr<bool> row = again->Step();
    ASSERT_TRUE(row.ok()) << row.status();
    EXPECT_FALSE(*row) << "x >= NULL matches nothing; a stale binding of 1 would match";
  }
  // A read still open on the connection would make this SQLITE_LOCKED.
  EXPECT_TRUE(db.Exec("DROP TABLE t").ok());
}

TEST_F(SqliteDbTest, AReusedStatementSeesSchemaChanges) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)").ok());
  EXPECT_EQ(QueryInt(db, "SELECT * FROM t"), 1);
  ASSERT_TRUE(db.Exec("DROP TABLE t; CREATE TABLE t (y TEXT, x INTEGER); "
                      "INSERT INTO t VALUES ('a', 5)")
                  .ok());
  EXPECT_EQ(QueryText(db, "SELECT * FROM t"), "a");
  // Only the first statement of a text is compiled, every time.
  EXPECT_EQ(QueryInt(db, "SELECT 1; SELECT 2"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT 1; SELECT 2"), 1);
}

// Against the contract, but it must not touch freed memory (ASan build):
// the statement is finalized, and SQLite then finishes the deferred close.
TEST_F(SqliteDbTest, AStatementGivenBackAfterItsDatabaseClosedIsFinalized) {
  std::optional<Statement> outlives;
  {
    Database db = OpenOrDie();
    ASSERT_TRUE(db.Exec("CREATE TABLE t (x INTEGER)").ok());
    absl::StatusOr<Statement> stmt = db.Prepare("SELECT x FROM t");
    ASSERT_TRUE(stmt.ok()) << stmt.status();
    outlives.emplace(std::move(*stmt));
  }
  outlives.reset();
  Database reopened = OpenOrDie();
  EXPECT_EQ(QueryInt(reopened, "SELECT COUNT(*) FROM t"), 0);
}

TEST_F(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  Database db = OpenOrDie();
  ASSERT_TRUE(db.Exec("CREATE TABLE t (x INTEGER)").ok());
  {
    absl::StatusOr<Transaction> tx = Transaction::Begin(db);
    ASSERT_TRUE(tx.ok()) << tx.status();
    ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (1)").ok());
    EXPECT_TRUE(db.InTransaction());
    // A failing statement mid-way: the guard still undoes the insert above.
    EXPECT_FALSE(db.Exec("INSERT INTO missing VALUES (2)").ok());
  }
  EXPECT_FALSE(db.InTransaction());
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM t"), 0);
  {
    absl::StatusOr<Transaction> tx = Transaction::Begin(db);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (3)").ok());
    ASSERT_TRUE(tx->Commit().ok());
    EXPECT_EQ(tx->Commit().code(), absl::StatusCode::kFailedPrecondition);
  }
  Database reopened = OpenOrDie();
  EXPECT_EQ(QueryInt(reopened, "SELECT COUNT(*) FROM t"), 1);
}

TEST_F(SqliteDbTest, SecondWriterWaitsThenFailsUnavailable) {
  Database first = OpenOrDie();
  absl::StatusOr<Database> second = Database::Open(PathOf("test.db"), /*busy_timeout_ms=*/50);
  ASSERT_TRUE(second.ok()) << second.status();
  absl::StatusOr<Transaction> held = Transaction::Begin(first);
  ASSERT_TRUE(held.ok());
  absl::StatusOr<Transaction> blocked = Transaction::Begin(*second);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kUnavailable) << blocked.status();
  ASSERT_TRUE(held->Commit().ok());
  EXPECT_TRUE(Transaction::Begin(*second).ok());
}

// Each migration would fail or duplicate rows if it ran twice.
constexpr Migration kTwo[] = {
    {1, "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"},
    {2, "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);"},
};
constexpr Migration kThree[] = {kTwo[0], kTwo[1], {3, "INSERT INTO a VALUES (3)"}};

TEST_F(SqliteDbTest, MigrationsApplyOnceInOrder) {
  {
    Database db = OpenOrDie();
    ASSERT_TRUE(ApplyMigrations(db, kTwo).ok());
    EXPECT_EQ(*SchemaVersion(db), 2);
    absl::Status again = ApplyMigrations(db, kTwo);
    EXPECT_TRUE(again.ok()) << again;
  }
  Database db = OpenOrDie();  // a restart
  ASSERT_TRUE(ApplyMigrations(db, kTwo).ok());
  ASSERT_TRUE(ApplyMigrations(db, kThree).ok());
  EXPECT_EQ(*SchemaVersion(db), 3);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM a"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT SUM(x) FROM a"), 6);
}

TEST_F(SqliteDbTest, FailedMigrationLeavesPreviousVersionWhole) {
  Database db = OpenOrDie();
  constexpr Migration kBroken[] = {
      kTwo[0], {2, "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1);"}};
  absl::Status s = ApplyMigrations(db, kBroken);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("migration 2"), absl::string_view::npos) << s;
  EXPECT_EQ(*SchemaVersion(db), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'b'"), 0);
  // The fixed migration then applies.
  ASSERT_TRUE(ApplyMigrations(db, kTwo).ok());
  EXPECT_EQ(*SchemaVersion(db), 2);
}

TEST_F(SqliteDbTest, NewerSchemaIsRefused) {
  Database db = OpenOrDie();
  ASSERT_TRUE(ApplyMigrations(db, kThree).ok());
  EXPECT_EQ(ApplyMigrations(db, kTwo).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SqliteDbTest, MisnumberedMigrationsAreRejected) {
  Database db = OpenOrDie();
  constexpr Migration kGap[] = {kTwo[0], {3, "SELECT 1"}};
  EXPECT_EQ(ApplyMigrations(db, kGap).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*SchemaVersion(db), 0);  // nothing applied
}

}  // namespace
}  // namespace aevatar::store
