#ifndef AEVATAR_STORE_MIGRATIONS_H_
#define AEVATAR_STORE_MIGRATIONS_H_

#include <span>

#include "absl/status/status.h"
#include "store/migration.h"
#include "store/sqlite_db.h"

namespace aevatar::store {

// Brings the schema of `db` up to the last of `migrations`.
//
// The schema version is the database's PRAGMA user_version (0 for a new
// file). Each migration whose version is above it runs in its own BEGIN
// IMMEDIATE transaction together with the user_version update, so a crash or
// an error leaves the schema at the previous version, never half-applied, and
// two processes opening the same file at once apply each migration once.
//
// Requires: `migrations` numbered 1, 2, 3, … in order (InvalidArgument
// otherwise). FailedPrecondition when the database is at a version newer than
// the last migration (written by a newer binary). Other errors come from the
// failing statement; the migrations applied before it stay applied.
absl::Status ApplyMigrations(Database& db, std::span<const Migration> migrations);

// Returns the database's PRAGMA user_version.
absl::StatusOr<int> SchemaVersion(Database& db);

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_MIGRATIONS_H_
