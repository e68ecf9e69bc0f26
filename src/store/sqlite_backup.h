#ifndef AEVATAR_STORE_SQLITE_BACKUP_H_
#define AEVATAR_STORE_SQLITE_BACKUP_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;

// Whole-database copies of SQLite files, for `aevatar backup` / `restore`:
// the online backup API (sqlite3_backup) in both directions, and the
// exclusive lock that tells whether a service has a file open. Errors follow
// store/sqlite_db.h (busy/locked -> Unavailable, corruption -> DataLoss, …).
namespace aevatar::store {

// Online backup: writes a consistent snapshot of the existing database file
// at `source_path` to a new self-contained file at `dest_path` (mode 0600,
// rollback journal, no -wal beside it). The source is opened read-only and
// its pages are copied in one read transaction, so the copy holds exactly the
// transactions committed before it began while the services that have the
// source open go on writing (WAL readers do not block writers). NotFound when
// the source does not exist; AlreadyExists when `dest_path` does.
absl::Status BackupDatabaseFile(const std::string& source_path, const std::string& dest_path);

// The PRAGMA user_version (schema version) of the existing database file at
// `path`, opened read-only. NotFound when the file does not exist.
absl::StatusOr<int> SchemaVersionOfFile(const std::string& path);

// A database file held by one connection alone, from Open until destruction
// (locking_mode=EXCLUSIVE, the lock taken at Open): no other connection, in
// any process, can read or write it meanwhile. Move-only.
class ExclusiveDatabase {
 public:
  // Opens (creating it 0600 if needed) the database file at `path` and takes
  // the lock, waiting up to `busy_timeout_ms`. Unavailable, saying the file
  // is in use, when another connection has it open: a process that has a WAL
  // database open holds a shared lock on it for as long as it stays open,
  // and the kernel drops that lock when the process dies, so this is how a
  // tool tells that a service is running on the file.
  static absl::StatusOr<ExclusiveDatabase> Open(const std::string& path, int busy_timeout_ms);

  ExclusiveDatabase(ExclusiveDatabase&& other) noexcept;
  ExclusiveDatabase& operator=(ExclusiveDatabase&& other) noexcept;
  ExclusiveDatabase(const ExclusiveDatabase&) = delete;
  ExclusiveDatabase& operator=(const ExclusiveDatabase&) = delete;
  ~ExclusiveDatabase();

  // Replaces the whole content of the database with that of the database
  // file at `source_path` (sqlite3_backup into this connection), as one write
  // transaction: a failure leaves the old content. NotFound when
  // `source_path` does not exist.
  absl::Status RestoreFrom(const std::string& source_path);

  // The database's PRAGMA user_version.
  absl::StatusOr<int> SchemaVersion();

 private:
  explicit ExclusiveDatabase(sqlite3* db) : db_(db) {}

  sqlite3* db_ = nullptr;
};

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_SQLITE_BACKUP_H_
