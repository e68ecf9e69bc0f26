// Whole-database copies through the sqlite3_backup API: an online backup of a
// database that its services keep using, and the restore of such a copy
// under an exclusive lock.
#include "store/sqlite_backup.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sqlite_internal.h"

namespace aevatar::store {
namespace {

using internal::SqliteError;

// The default busy wait of store/sqlite_db.h, for the backup's own opens.
constexpr int kBusyTimeoutMs = 5000;
// A backup step that meets a lock (a checkpoint, an exclusive holder) is
// retried: 200 times 25 ms, five seconds like the busy timeout.
constexpr int kBusyRetries = 200;
constexpr int kBusyRetryMs = 25;

bool IsBusy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

// One connection this file opens for one copy; closed on destruction.
struct Connection {
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { sqlite3_close_v2(db); }
  sqlite3* db = nullptr;
};

absl::Status OpenRaw(const std::string& path, int flags, int busy_timeout_ms, Connection& out) {
  const int rc = sqlite3_open_v2(path.c_str(), &out.db, flags | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, absl::StrCat("sqlite open ", path), out.db);
  sqlite3_extended_result_codes(out.db, 1);
  sqlite3_busy_timeout(out.db, busy_timeout_ms);
  return absl::OkStatus();
}

absl::Status ExecRaw(sqlite3* db, const char* sql, const std::string& what) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? absl::OkStatus() : SqliteError(rc, what, db);
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

absl::Status OpenExistingReadOnly(const std::string& path, Connection& out) {
  if (!Exists(path)) return absl::NotFoundError(absl::StrCat("sqlite open ", path, ": no file"));
  return OpenRaw(path, SQLITE_OPEN_READONLY, kBusyTimeoutMs, out);
}

// Copies every page of `source` into `dest` in one step, so that the source
// is read in one transaction (one snapshot). Errors are reported from `dest`,
// where sqlite3_backup_finish leaves them.
absl::Status CopyAllPages(sqlite3* dest, sqlite3* source, const std::string& what) {
  for (int attempt = 0;; ++attempt) {
    sqlite3_backup* backup = sqlite3_backup_init(dest, "main", source, "main");
    if (backup == nullptr) return SqliteError(sqlite3_errcode(dest), what, dest);
    const int step = sqlite3_backup_step(backup, -1);
    const int finish = sqlite3_backup_finish(backup);
    if (step == SQLITE_DONE && finish == SQLITE_OK) return absl::OkStatus();
    const int rc = step == SQLITE_DONE ? finish : step;
    if (!IsBusy(rc) || attempt >= kBusyRetries) return SqliteError(rc, what, dest);
    sqlite3_sleep(kBusyRetryMs);
  }
}

absl::StatusOr<int> UserVersion(sqlite3* db, const std::string& what) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
  const int version = rc == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return SqliteError(rc, what, db);
  return version;
}

}  // namespace

absl::Status BackupDatabaseFile(const std::string& source_path, const std::string& dest_path) {
  const std::string what = absl::StrCat("sqlite backup of ", source_path, " to ", dest_path);
  Connection source;
  if (absl::Status s = OpenExistingReadOnly(source_path, source); !s.ok()) return s;
  if (Exists(dest_path)) return absl::AlreadyExistsError(absl::StrCat(what, ": file exists"));
  if (absl::Status s = internal::CreateOwnerOnly(dest_path); !s.ok()) return s;
  Connection dest;
  if (absl::Status s = OpenRaw(dest_path, SQLITE_OPEN_READWRITE, kBusyTimeoutMs, dest); !s.ok()) {
    return s;
  }
  // The copy is one file in rollback-journal mode; its commit is fsynced.
  if (absl::Status s = ExecRaw(dest.db, "PRAGMA synchronous=FULL", what); !s.ok()) return s;
  return CopyAllPages(dest.db, source.db, what);
}

absl::StatusOr<int> SchemaVersionOfFile(const std::string& path) {
  Connection db;
  if (absl::Status s = OpenExistingReadOnly(path, db); !s.ok()) return s;
  return UserVersion(db.db, absl::StrCat("sqlite schema version of ", path));
}

absl::StatusOr<ExclusiveDatabase> ExclusiveDatabase::Open(const std::string& path,
                                                          int busy_timeout_ms) {
  if (absl::Status s = internal::CreateOwnerOnly(path); !s.ok()) return s;
  Connection raw;
  if (absl::Status s =
          OpenRaw(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busy_timeout_ms, raw);
      !s.ok()) {
    return s;
  }
  // locking_mode is set before the first access, so that a WAL database is
  // used without the shared-memory index and the lock is on the file itself;
  // BEGIN EXCLUSIVE takes it now, and exclusive mode keeps it after COMMIT.
  const int rc = sqlite3_exec(
      raw.db, "PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=FULL; BEGIN EXCLUSIVE; COMMIT",
      nullptr, nullptr, nullptr);
  if (IsBusy(rc)) {
    return absl::UnavailableError(
        absl::StrCat(path, " is in use by another process (a service has it open)"));
  }
  if (rc != SQLITE_OK) return SqliteError(rc, absl::StrCat("sqlite exclusive open ", path), raw.db);
  return ExclusiveDatabase(std::exchange(raw.db, nullptr));
}

ExclusiveDatabase::ExclusiveDatabase(ExclusiveDatabase&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

ExclusiveDatabase& ExclusiveDatabase::operator=(ExclusiveDatabase&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

ExclusiveDatabase::~ExclusiveDatabase() { sqlite3_close_v2(db_); }

absl::Status ExclusiveDatabase::RestoreFrom(const std::string& source_path) {
  Connection source;
  if (absl::Status s = OpenExistingReadOnly(source_path, source); !s.ok()) return s;
  return CopyAllPages(db_, source.db, absl::StrCat("sqlite restore from ", source_path));
}

absl::StatusOr<int> ExclusiveDatabase::SchemaVersion() {
  return UserVersion(db_, "sqlite schema version");
}

}  // namespace aevatar::store
