#ifndef AEVATAR_STORE_PG_POOL_H_
#define AEVATAR_STORE_PG_POOL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pqxx/pqxx"

namespace aevatar::store {

// Connections to one PostgreSQL database, shared by the threads of a store.
// The only code that calls libpqxx outside a body given to Transact; every
// libpqxx exception stops here and becomes an absl::Status:
//  - the connection broke or could not be made, the server is shutting down,
//    or a serialization failure/deadlock: Unavailable (a retry may succeed);
//  - the commit's outcome is unknown (the link broke during COMMIT): Unknown;
//  - a unique constraint was violated: AlreadyExists;
//  - a data exception (SQLSTATE class 22: a value that is not valid UTF-8,
//    out of range…): InvalidArgument, without the server's message;
//  - anything else: Internal.
// Messages are the first line of libpq's or the server's (never its DETAIL
// lines, which quote row values); they never hold the connection string
// (which may carry a password).
//
// Thread-safe. A connection is used by one thread at a time; at most
// `max_connections` are open and callers beyond that wait for one.
class PgPool {
 public:
  // Connects once, so that an unreachable database or a refused login fails
  // here (Unavailable, with libpq's reason). `conninfo` is a libpq connection
  // URI (postgresql://…) or key=value string; a connect_timeout of 10 s is
  // added unless it sets one. Requires max_connections >= 1.
  static absl::StatusOr<std::unique_ptr<PgPool>> Connect(const std::string& conninfo,
                                                         int max_connections = 8);

  // Runs `body` in one READ COMMITTED transaction on a pooled connection and
  // commits when it returns OK (rolls back otherwise). A broken connection
  // is dropped; when it breaks before the commit the body runs once more on
  // a new connection (after a database restart the idle ones are all dead),
  // so `body` must not keep effects outside the transaction.
  absl::Status Transact(const std::function<absl::Status(pqxx::work&)>& body);

  // Transact for a body that returns a value.
  template <typename T>
  absl::StatusOr<T> TransactFor(const std::function<absl::StatusOr<T>(pqxx::work&)>& body) {
    std::optional<absl::StatusOr<T>> out;
    absl::Status status = Transact([&](pqxx::work& tx) {
      out = body(tx);
      return out->status();
    });
    if (!status.ok()) return status;
    return std::move(*out);
  }

  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

 private:
  PgPool(std::string conninfo, int max_connections)
      : conninfo_(std::move(conninfo)), max_connections_(max_connections) {}

  // An idle connection, or a new one when fewer than max are open; waits
  // otherwise. `fresh` forces a new connection.
  absl::StatusOr<std::unique_ptr<pqxx::connection>> Acquire(bool fresh);
  // Returns `conn` to the idle list, or closes it when it is broken.
  void Release(std::unique_ptr<pqxx::connection> conn);
  absl::StatusOr<std::unique_ptr<pqxx::connection>> Open();

  const std::string conninfo_;
  const int max_connections_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle plus in use
};

// The first key of every advisory lock this project takes (the second names
// what it guards), so that other users of the database hold other keys.
inline constexpr int kPgAdvisoryLockSpace = 0x61657661;  // "aeva"

// Adds connect_timeout=`seconds` to a libpq URI or key=value string that
// names none.
std::string WithConnectTimeout(const std::string& conninfo, int seconds);

}  // namespace aevatar::store

#endif  // AEVATAR_STORE_PG_POOL_H_
