#include "store/migrations.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace aevatar::store {

absl::Status CheckMigrationNumbers(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration #", i, " has version ", migrations[i].version, ", want ", i + 1));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SchemaVersion(Database& db) {
  absl::StatusOr<int64_t> version = db.QueryInt64("PRAGMA user_version");
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

namespace {

// Applies `migration` if the schema is below it. The version is re-read inside
// the write transaction: another process may have applied it meanwhile.
absl::Status ApplyOne(Database& db, const Migration& migration) {
  absl::StatusOr<Transaction> tx = Transaction::Begin(db);
  if (!tx.ok()) return tx.status();
  absl::StatusOr<int> current = SchemaVersion(db);
  if (!current.ok()) return current.status();
  if (*current >= migration.version) return absl::OkStatus();
  if (absl::Status s = db.Exec(std::string(migration.sql)); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("migration ", migration.version, ": ", s.message()));
  }
  if (absl::Status s = db.Exec(absl::StrCat("PRAGMA user_version = ", migration.version));
      !s.ok()) {
    return s;
  }
  return tx->Commit();
}

}  // namespace

absl::Status ApplyMigrations(Database& db, std::span<const Migration> migrations) {
  if (absl::Status s = CheckMigrationNumbers(migrations); !s.ok()) return s;
  absl::StatusOr<int> current = SchemaVersion(db);
  if (!current.ok()) return current.status();
  if (*current > static_cast<int>(migrations.size())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", *current, " is newer than this binary's ", migrations.size()));
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= *current) continue;  // skip without taking the write lock
    if (absl::Status s = ApplyOne(db, migration); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace aevatar::store
