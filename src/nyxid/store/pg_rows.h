#ifndef AEVATAR_NYXID_STORE_PG_ROWS_H_
#define AEVATAR_NYXID_STORE_PG_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/pg_pool.h"

// Private to src/nyxid: one-statement transactions on a PgPool for the
// PostgreSQL stores, with rows read through nyxid/store/store_rows.h.
namespace aevatar::nyxid::pg_rows {

// A result row as the Row that nyxid/store/store_rows.h reads.
struct PgRow {
  const pqxx::row& row;
  std::string Text(int i) const { return row[i].as<std::string>(); }
  int64_t Int(int i) const { return row[i].as<int64_t>(); }
  bool Flag(int i) const { return row[i].as<bool>(); }
  bool Null(int i) const { return row[i].is_null(); }
};

// `status` with only the server's first message line: its DETAIL line quotes
// the values of the violated key (a username, a key hash), which a store
// error never carries. AlreadyExists becomes "<what> already exists".
absl::Status Scrubbed(absl::Status status, const char* what);

template <typename T>
absl::StatusOr<T> Scrubbed(absl::StatusOr<T> value, const char* what) {
  if (value.ok()) return value;
  return Scrubbed(value.status(), what);
}

// Runs `sql` with `args` and returns the number of rows it changed.
template <typename... Args>
absl::StatusOr<int64_t> Exec(store::PgPool& pool, const char* what, const std::string& sql,
                             const Args&... args) {
  return Scrubbed(pool.TransactFor<int64_t>([&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return static_cast<int64_t>(tx.exec_params(sql, args...).affected_rows());
  }),
                  what);
}

// Runs the query `sql` and returns every row built by `from_row(PgRow)`.
template <typename T, typename FromRow, typename... Args>
absl::StatusOr<std::vector<T>> All(store::PgPool& pool, const char* what, const std::string& sql,
                                   FromRow from_row, const Args&... args) {
  return Scrubbed(
      pool.TransactFor<std::vector<T>>([&](pqxx::work& tx) -> absl::StatusOr<std::vector<T>> {
        std::vector<T> out;
        for (const pqxx::row& row : tx.exec_params(sql, args...))
          out.push_back(from_row(PgRow{row}));
        return out;
      }),
      what);
}

// Runs the query `sql` and returns its first row built by `from_row(PgRow)`,
// or NotFound "<what> not found".
template <typename T, typename FromRow, typename... Args>
absl::StatusOr<T> One(store::PgPool& pool, const char* what, const std::string& sql,
                      FromRow from_row, const Args&... args) {
  return Scrubbed(pool.TransactFor<T>([&](pqxx::work& tx) -> absl::StatusOr<T> {
    pqxx::result rows = tx.exec_params(sql, args...);
    if (rows.empty()) return absl::NotFoundError(std::string(what) + " not found");
    return from_row(PgRow{rows[0]});
  }),
                  what);
}

}  // namespace aevatar::nyxid::pg_rows

#endif  // AEVATAR_NYXID_STORE_PG_ROWS_H_
