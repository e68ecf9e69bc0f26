#ifndef AEVATAR_STORE_SQLITE_INTERNAL_H_
#define AEVATAR_STORE_SQLITE_INTERNAL_H_

#include <string>

#include "absl/status/status.h"

struct sqlite3;

// Shared by the files of aevatar_store that call SQLite (sqlite_db.cc,
// sqlite_backup.cc); not for use outside src/store.
namespace aevatar::store::internal {

// The status for SQLite result code `rc` (mapped as sqlite_db.h describes),
// with `what` naming the operation and then SQLite's message for `db` (or
// for `rc` when `db` is null). SQLite's messages name columns, never values.
absl::Status SqliteError(int rc, const std::string& what, sqlite3* db);

// Creates `path` owner-only (0600) if it does not exist yet. Append mode, so
// a file created concurrently by another process is never truncated.
absl::Status CreateOwnerOnly(const std::string& path);

}  // namespace aevatar::store::internal

#endif  // AEVATAR_STORE_SQLITE_INTERNAL_H_
