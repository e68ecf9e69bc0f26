#include "store/pg_migrations.h"

#include "absl/strings/str_cat.h"

namespace aevatar::store {
namespace {

// Takes the migration lock until the transaction ends, then makes the
// version table. CREATE TABLE IF NOT EXISTS alone is not safe against a
// concurrent creator (both may pass the check), hence the lock first. One
// lock for every component: the services that share a database all create
// this one table when they first start together on it.
void LockAndPrepare(pqxx::work& tx) {
  tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext('migrations'))", kPgAdvisoryLockSpace);
  tx.exec(
      "CREATE TABLE IF NOT EXISTS aevatar_schema ("
      "  component TEXT PRIMARY KEY,"
      "  version   INTEGER NOT NULL CHECK (version >= 0))");
}

int ReadVersion(pqxx::work& tx, const std::string& component) {
  pqxx::result row =
      tx.exec_params("SELECT version FROM aevatar_schema WHERE component = $1", component);
  return row.empty() ? 0 : row[0][0].as<int>();
}

}  // namespace

absl::Status ApplyPgMigrations(PgPool& pool, const std::string& component,
                               std::span<const Migration> migrations) {
  if (absl::Status s = CheckMigrationNumbers(migrations); !s.ok()) return s;
  const int last = static_cast<int>(migrations.size());
  for (;;) {
    bool done = false;
    absl::Status s = pool.Transact([&](pqxx::work& tx) -> absl::Status {
      LockAndPrepare(tx);
      const int current = ReadVersion(tx, component);
      if (current > last) {
        return absl::FailedPreconditionError(absl::StrCat("database schema version ", current,
                                                          " of ", component,
                                                          " is newer than this binary's ", last));
      }
      if (current == last) {
        done = true;
        return absl::OkStatus();
      }
      const Migration& next = migrations[current];
      try {
        tx.exec(std::string(next.sql));
      } catch (const pqxx::sql_error& e) {
        return absl::InternalError(
            absl::StrCat(component, " migration ", next.version, ": ", e.what()));
      }
      tx.exec_params(
          "INSERT INTO aevatar_schema (component, version) VALUES ($1, $2) "
          "ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version",
          component, next.version);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    if (done) return absl::OkStatus();
  }
}

absl::StatusOr<int> PgSchemaVersion(PgPool& pool, const std::string& component) {
  return pool.TransactFor<int>([&](pqxx::work& tx) -> absl::StatusOr<int> {
    pqxx::result exists = tx.exec("SELECT to_regclass('aevatar_schema') IS NOT NULL");
    if (!exists[0][0].as<bool>()) return 0;
    return ReadVersion(tx, component);
  });
}

}  // namespace aevatar::store
