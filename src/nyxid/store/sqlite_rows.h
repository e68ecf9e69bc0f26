#ifndef AEVATAR_NYXID_STORE_SQLITE_ROWS_H_
#define AEVATAR_NYXID_STORE_SQLITE_ROWS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sqlite_db.h"

// Row readers shared by the SqliteNyxidStore source files.
namespace aevatar::nyxid::sqlite_rows {

// Runs `statement` and returns every row, each built by `from_row`.
template <typename T, typename FromRow>
absl::StatusOr<std::vector<T>> All(absl::StatusOr<store::Statement> statement, FromRow from_row) {
  if (!statement.ok()) return statement.status();
  std::vector<T> rows;
  while (true) {
    auto has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) break;
    rows.push_back(from_row(*statement));
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
  return from_row(*statement);
}

}  // namespace aevatar::nyxid::sqlite_rows

#endif  // AEVATAR_NYXID_STORE_SQLITE_ROWS_H_
