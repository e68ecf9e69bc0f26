#ifndef AEVATAR_STORE_MIGRATION_H_
#define AEVATAR_STORE_MIGRATION_H_

#include <span>
#include <string_view>

#include "absl/status/status.h"

namespace aevatar::store {

// One schema step, for SQLite (store/migrations.h) and PostgreSQL
// (store/pg_migrations.h) alike. A migration, once released, is never edited:
// a change to the schema is a new migration appended to the list.
struct Migration {
  int version;           // 1 for the first, then consecutive
  std::string_view sql;  // one or more ';'-separated statements, no parameters
};

// OK when `migrations` are numbered 1, 2, 3, … in order; InvalidArgument
// naming the first that is not.
absl::Status CheckMigrationNumbers(std::span<const Migration> migrations);

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_MIGRATION_H_
