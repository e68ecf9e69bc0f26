#ifndef AEVATAR_STORE_SQLITE_DB_H_
#define AEVATAR_STORE_SQLITE_DB_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Kept opaque so that only sqlite_db.cc includes <sqlite3.h>.
struct sqlite3;
struct sqlite3_stmt;

namespace aevatar::store {
namespace internal {
class StatementCache;
}

// A thin RAII layer over the SQLite C API.
//
// Errors are absl::Status values whose message names the failing SQL
// operation (a shortened form of the statement text, e.g. "sqlite step `INSERT
// INTO operations …`") followed by SQLite's own message. Bound values never
// appear in a message: statement texts use placeholders, and SQLite's messages
// name columns and constraints, not values.
//
// Status codes: busy/locked, I/O, disk full and can't-open -> Unavailable;
// corruption -> DataLoss; UNIQUE/PRIMARY KEY violations -> AlreadyExists; other
// constraint, type and range errors -> InvalidArgument; everything else
// (including SQL syntax errors) -> Internal.

class Database;

// Marks bytes to be bound as a BLOB rather than TEXT. Explicit, so that a
// string never becomes a blob by accident.
struct Blob {
  explicit Blob(std::string_view b) : bytes(b) {}
  std::string_view bytes;
};

// One positional parameter value for BindAll and the Database shortcuts. The
// viewed bytes must outlive the call (they are copied when bound).
using Value = std::variant<int64_t, std::string_view, Blob>;

// One prepared statement. Move-only; on destruction it is reset and handed
// back to its Database, which keeps it compiled for the next Prepare of the
// same text. Must not outlive the Database that prepared it. Not thread-safe: use it from the
// thread that holds the database (see Database).
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Bind the 1-based parameter `index`. Text and blob values are copied.
  absl::Status BindInt64(int index, int64_t value);
  absl::Status BindDouble(int index, double value);
  absl::Status BindText(int index, std::string_view value);
  absl::Status BindBlob(int index, std::string_view bytes);
  absl::Status BindNull(int index);
  // Binds `values` to ?1, ?2, … in order.
  absl::Status BindAll(std::initializer_list<Value> values);

  // Advances to the next row. Returns true when a row is available to the
  // Column* accessors, false when the statement has finished. On error the
  // statement is reset, so it can be run again.
  absl::StatusOr<bool> Step();

  // Runs a statement that yields no rows (INSERT/UPDATE/DELETE/DDL) to
  // completion. Internal if it yields a row.
  absl::Status Run();

  // Rewinds the statement and clears its bindings, for reuse.
  void Reset();

  // Read the 0-based column `col` of the current row. Valid only after Step()
  // returned true. NULL reads as 0 / 0.0 / "".
  int64_t ColumnInt64(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string label,
            std::shared_ptr<internal::StatementCache> cache);
  absl::Status CheckBind(int rc, int index) const;
  // Hands the statement back to the cache it came from.
  void Release();

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string label_;  // shortened SQL text, for error messages
  // Shared, so that a statement given back after its Database closed is
  // finalized instead of touching freed memory.
  std::shared_ptr<internal::StatementCache> cache_;
};

// One SQLite connection. Move-only; closed on destruction (after its last
// statement is finalized). The handle is opened in serialized mode, but a
// Database and its statements form one unit of state (the current
// transaction, the last error, Changes()): callers that share it between
// threads must serialize their use, e.g. behind one mutex.
class Database {
 public:
  // Default busy wait: how long a writer waits for another connection's lock
  // before failing with Unavailable.
  static constexpr int kDefaultBusyTimeoutMs = 5000;

  // Opens (creating if needed) the database file at `path` with
  //   journal_mode=WAL     readers never block the writer;
  //   synchronous=FULL     a commit is fsynced before it returns, so accepted
  //                        work survives power loss, not only kill -9;
  //   busy_timeout         other connections' locks are waited for;
  //   foreign_keys=ON.
  // A file this call creates gets mode 0600 (it will hold user source and
  // sealed credentials); SQLite gives its -wal/-shm files the same mode. An
  // existing file's mode is left alone. ":memory:" opens a private in-memory
  // database (no WAL). FailedPrecondition if WAL cannot be enabled.
  static absl::StatusOr<Database> Open(const std::string& path,
                                       int busy_timeout_ms = kDefaultBusyTimeoutMs);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more ';'-separated statements without parameters (DDL,
  // PRAGMA, BEGIN/COMMIT). Rows they yield are discarded.
  absl::Status Exec(const std::string& sql);

  // Compiles one statement (or takes the kept compilation of the same text)
  // and binds `values` to ?1, ?2, ….
  absl::StatusOr<Statement> Prepare(const std::string& sql,
                                    std::initializer_list<Value> values = {});

  // Runs one statement that yields no rows; returns the rows it changed.
  absl::StatusOr<int64_t> Run(const std::string& sql, std::initializer_list<Value> values = {});

  // Returns the first column of the first row of one query, as an integer.
  // NotFound when the query yields no row.
  absl::StatusOr<int64_t> QueryInt64(const std::string& sql,
                                     std::initializer_list<Value> values = {});

  // Rows changed by the most recent INSERT/UPDATE/DELETE on this connection.
  int64_t Changes() const;

  // True while an explicit transaction is open on this connection.
  bool InTransaction() const;

 private:
  explicit Database(sqlite3* db);
  void Close();

  sqlite3* db_ = nullptr;
  std::shared_ptr<internal::StatementCache> statements_;
};

// Holds a write transaction opened with BEGIN IMMEDIATE: the write lock is
// taken at the start, so two writers never both read-then-write stale data
// and a lock conflict shows up at Begin (after busy_timeout), not mid-way.
// Rolls back on destruction unless Commit() succeeded. Move-only; must not
// outlive its Database.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Database& db);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Commits. On error the transaction is still open and is rolled back by the
  // destructor. Calling it twice is a FailedPrecondition.
  absl::Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}

  Database* db_ = nullptr;  // null once committed or moved from
};

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_SQLITE_DB_H_
