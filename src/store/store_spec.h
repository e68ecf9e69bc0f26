#ifndef AEVATAR_STORE_STORE_SPEC_H_
#define AEVATAR_STORE_STORE_SPEC_H_

#include <optional>
#include <string>
#include <string_view>

namespace aevatar::store {

// The libpq connection string a `--store` value names, or nullopt when it
// names no PostgreSQL database. Every service spells it the same way:
// a libpq URI as it is ("postgresql://…", or libpq's alias "postgres://…"),
// or anything libpq takes after "postgres:" (a key=value string).
std::optional<std::string> PostgresConninfo(std::string_view spec);

// Whether a `--store` value asks for the service's default: SQLite files in
// its state directory ("" or "sqlite", the word `aevatar up --store` takes).
inline bool NamesDefaultSqlite(std::string_view spec) { return spec.empty() || spec == "sqlite"; }

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_STORE_SPEC_H_
