#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sqlite_internal.h"
#include "store/statement_cache.h"

namespace aevatar::store {
namespace {

constexpr size_t kMaxLabelChars = 60;

// A one-line, shortened statement text that names the operation in errors.
std::string SqlLabel(std::string_view sql) {
  std::string label;
  bool pending_space = false;
  for (char c : sql) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      pending_space = !label.empty();
      continue;
    }
    if (label.size() >= kMaxLabelChars) return label + " …";
    if (pending_space) label += ' ';
    pending_space = false;
    label += c;
  }
  return label;
}

absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_CONSTRAINT:
      return (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
                 ? absl::StatusCode::kAlreadyExists
                 : absl::StatusCode::kInvalidArgument;
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

namespace internal {

absl::Status SqliteError(int rc, const std::string& what, sqlite3* db) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return absl::Status(CodeFor(rc), absl::StrCat(what, ": ", std::string(detail)));
}

absl::Status CreateOwnerOnly(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return absl::OkStatus();
  { std::ofstream create(path, std::ios::app | std::ios::binary); }
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("create database ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace internal

namespace {

using internal::CreateOwnerOnly;
using internal::SqliteError;

// sqlite3_bind_* with a null pointer would bind NULL; an empty value must
// stay an empty string or blob.
const char* NonNull(std::string_view value) { return value.data() ? value.data() : ""; }

bool IsInMemory(const std::string& path) { return path.empty() || path == ":memory:"; }

}  // namespace

// ---- Statement ----

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string label,
                     std::shared_ptr<internal::StatementCache> cache)
    : db_(db), stmt_(stmt), label_(std::move(label)), cache_(std::move(cache)) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      label_(std::move(other.label_)),
      cache_(std::move(other.cache_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    label_ = std::move(other.label_);
    cache_ = std::move(other.cache_);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  sqlite3_stmt* stmt = std::exchange(stmt_, nullptr);
  if (cache_ == nullptr) {
    sqlite3_finalize(stmt);
    return;
  }
  cache_->Give({stmt, std::move(label_)});
}

absl::Status Statement::CheckBind(int rc, int index) const {
  if (rc == SQLITE_OK) return absl::OkStatus();
  return SqliteError(rc, absl::StrCat("sqlite bind #", index, " `", label_, "`"), db_);
}

absl::Status Statement::BindInt64(int index, int64_t value) {
  return CheckBind(sqlite3_bind_int64(stmt_, index, value), index);
}

absl::Status Statement::BindDouble(int index, double value) {
  return CheckBind(sqlite3_bind_double(stmt_, index, value), index);
}

absl::Status Statement::BindText(int index, std::string_view value) {
  return CheckBind(sqlite3_bind_text64(stmt_, index, NonNull(value), value.size(), SQLITE_TRANSIENT,
                                       SQLITE_UTF8),
                   index);
}

absl::Status Statement::BindBlob(int index, std::string_view bytes) {
  return CheckBind(
      sqlite3_bind_blob64(stmt_, index, NonNull(bytes), bytes.size(), SQLITE_TRANSIENT), index);
}

absl::Status Statement::BindNull(int index) {
  return CheckBind(sqlite3_bind_null(stmt_, index), index);
}

absl::Status Statement::BindAll(std::initializer_list<Value> values) {
  int index = 1;
  for (const Value& value : values) {
    absl::Status s;
    if (const int64_t* i = std::get_if<int64_t>(&value)) {
      s = BindInt64(index, *i);
    } else if (const std::string_view* text = std::get_if<std::string_view>(&value)) {
      s = BindText(index, *text);
    } else {
      s = BindBlob(index, std::get<Blob>(value).bytes);
    }
    if (!s.ok()) return s;
    ++index;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status error = SqliteError(rc, absl::StrCat("sqlite step `", label_, "`"), db_);
  sqlite3_reset(stmt_);
  return error;
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  if (*row) {
    sqlite3_reset(stmt_);
    return absl::InternalError(absl::StrCat("sqlite run `", label_, "`: yielded a row"));
  }
  return absl::OkStatus();
}

void Statement::Reset() {
  // The return value repeats the last Step() error, already reported there.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  // Length after the conversion above; text may hold NUL bytes.
  const int size = sqlite3_column_bytes(stmt_, col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string Statement::ColumnBlob(int col) const {
  const void* bytes = sqlite3_column_blob(stmt_, col);
  const int size = sqlite3_column_bytes(stmt_, col);
  if (bytes == nullptr) return "";
  return std::string(static_cast<const char*>(bytes), static_cast<size_t>(size));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

// ---- Database ----

absl::StatusOr<Database> Database::Open(const std::string& path, int busy_timeout_ms) {
  if (!IsInMemory(path)) {
    if (absl::Status created = CreateOwnerOnly(path); !created.ok()) return created;
  }
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // Even a failed open may allocate a handle; the Database closes it.
  Database db(raw);
  if (rc != SQLITE_OK) return SqliteError(rc, absl::StrCat("sqlite open ", path), raw);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);

  std::string mode;
  {
    absl::StatusOr<Statement> journal = db.Prepare("PRAGMA journal_mode=WAL");
    if (!journal.ok()) return journal.status();
    absl::StatusOr<bool> row = journal->Step();
    if (!row.ok()) return row.status();
    if (*row) mode = journal->ColumnText(0);
  }
  if (mode != "wal" && !IsInMemory(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("sqlite open ", path, ": journal_mode is '", mode, "', not 'wal'"));
  }
  if (absl::Status s = db.Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"); !s.ok()) {
    return s;
  }
  return db;
}

Database::Database(sqlite3* db)
    : db_(db), statements_(std::make_shared<internal::StatementCache>()) {}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), statements_(std::move(other.statements_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    Close();
    db_ = std::exchange(other.db_, nullptr);
    statements_ = std::move(other.statements_);
  }
  return *this;
}

Database::~Database() { Close(); }

void Database::Close() {
  if (statements_ != nullptr) statements_->FinalizeAll();
  // close_v2 defers the close until the last statement is finalized.
  if (db_ != nullptr) sqlite3_close_v2(std::exchange(db_, nullptr));
}

absl::Status Database::Exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return absl::OkStatus();
  return SqliteError(rc, absl::StrCat("sqlite exec `", SqlLabel(sql), "`"), db_);
}

absl::StatusOr<Statement> Database::Prepare(const std::string& sql,
                                            std::initializer_list<Value> values) {
  if (std::optional<internal::StatementCache::Entry> kept = statements_->Take(sql)) {
    Statement statement(db_, kept->stmt, std::move(kept->label), statements_);
    if (absl::Status s = statement.BindAll(values); !s.ok()) return s;
    return statement;
  }
  sqlite3_stmt* stmt = nullptr;
  std::string label = SqlLabel(sql);
  // PERSISTENT: the statement is kept across calls, so SQLite allocates it
  // outside the connection's small lookaside pool.
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(rc, absl::StrCat("sqlite prepare `", label, "`"), db_);
  }
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("sqlite prepare `", label, "`: no statement"));
  }
  // Kept only when the text is exactly one statement: the cache is keyed by
  // what SQLite compiled, which leaves out anything after the first `;`.
  const bool whole = sql == sqlite3_sql(stmt);
  Statement statement(db_, stmt, std::move(label), whole ? statements_ : nullptr);
  if (absl::Status s = statement.BindAll(values); !s.ok()) return s;
  return statement;
}

absl::StatusOr<int64_t> Database::Run(const std::string& sql, std::initializer_list<Value> values) {
  absl::StatusOr<Statement> stmt = Prepare(sql, values);
  if (!stmt.ok()) return stmt.status();
  if (absl::Status s = stmt->Run(); !s.ok()) return s;
  return Changes();
}

absl::StatusOr<int64_t> Database::QueryInt64(const std::string& sql,
                                             std::initializer_list<Value> values) {
  absl::StatusOr<Statement> stmt = Prepare(sql, values);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("sqlite query `", SqlLabel(sql), "`: no row"));
  return stmt->ColumnInt64(0);
}

int64_t Database::Changes() const { return sqlite3_changes64(db_); }

bool Database::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

// ---- Transaction ----

absl::StatusOr<Transaction> Transaction::Begin(Database& db) {
  // Run, not Exec: the transaction's control statements come with every
  // write, and Run keeps them compiled.
  if (absl::Status s = db.Run("BEGIN IMMEDIATE").status(); !s.ok()) return s;
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // A failed statement or COMMIT may already have rolled back on its own.
  if (db_ != nullptr && db_->InTransaction()) db_->Exec("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Commit() {
  if (db_ == nullptr) return absl::FailedPreconditionError("sqlite commit: no open transaction");
  if (absl::Status s = db_->Run("COMMIT").status(); !s.ok()) return s;
  db_ = nullptr;
  return absl::OkStatus();
}

}  // namespace aevatar::store
