#ifndef AEVATAR_NYXID_STORE_SQLITE_ROWS_H_
#define AEVATAR_NYXID_STORE_SQLITE_ROWS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sqlite_db.h"

// Row readers shared by the SQLite stores' source files.
namespace aevatar::nyxid::sqlite_rows {

// A statement's current row as the Row that nyxid/store/store_rows.h reads.
struct SqliteRow {
  const store::Statement& statement;
  std::string Text(int i) const { return statement.ColumnText(i); }
  int64_t Int(int i) const { return statement.ColumnInt64(i); }
  bool Flag(int i) const { return statement.ColumnInt64(i) != 0; }
  bool Null(int i) const { return statement.ColumnIsNull(i); }
};

// Runs `statement` and returns every row, each built by `from_row(SqliteRow)`.
template <typename T, typename FromRow>
absl::StatusOr<std::vector<T>> All(absl::StatusOr<store::Statement> statement, FromRow from_row) {
  if (!statement.ok()) return statement.status();
  std::vector<T> rows;
  while (true) {
    auto has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) break;
    rows.push_back(from_row(SqliteRow{*statement}));
  }
  return rows;
}

// Runs `statement` and returns its first row built by `from_row`, or
// NotFound naming `what`.
template <typename T, typename FromRow>
absl::StatusOr<T> One(absl::StatusOr<store::Statement> statement, FromRow from_row,
                      const char* what) {
  if (!statement.ok()) return statement.status();
  auto has_row = statement->Step();
  if (!has_row.ok()) return has_row.status();
  if (!*has_row) return absl::NotFoundError(std::string(what) + " not found");
  return from_row(SqliteRow{*statement});
}

}  // namespace aevatar::nyxid::sqlite_rows

#endif  // AEVATAR_NYXID_STORE_SQLITE_ROWS_H_
