#ifndef AEVATAR_STORE_PG_MIGRATIONS_H_
#define AEVATAR_STORE_PG_MIGRATIONS_H_

#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/migration.h"
#include "store/pg_pool.h"

namespace aevatar::store {

// Brings the schema of `component` (e.g. "chrono") in the database behind
// `pool` up to the last of `migrations`.
//
// Versions live in the table aevatar_schema (component, version), created on
// first use. Each migration runs in its own transaction together with its
// version update, under a transaction-scoped advisory lock shared by every
// component (they all create aevatar_schema on a fresh database), so
// that replicas starting at once apply each migration exactly once and the
// others wait, then find it applied; a failure leaves the schema at the
// previous version, never half-applied (PostgreSQL's DDL is transactional).
//
// Requires: `migrations` numbered 1, 2, 3, … in order (InvalidArgument
// otherwise). FailedPrecondition when the database is at a version newer than
// the last migration (written by a newer binary). Storage errors as PgPool.
absl::Status ApplyPgMigrations(PgPool& pool, const std::string& component,
                               std::span<const Migration> migrations);

// Returns the schema version of `component`: 0 before its first migration.
absl::StatusOr<int> PgSchemaVersion(PgPool& pool, const std::string& component);

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_PG_MIGRATIONS_H_
