#ifndef AEVATAR_CHRONO_POSTGRES_OPERATION_STORE_H_
#define AEVATAR_CHRONO_POSTGRES_OPERATION_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "chrono/operation_store.h"

namespace aevatar::chrono {

// Returns an OperationStore kept in the PostgreSQL database at `conninfo` (a
// libpq URI, postgresql://user@host:port/db, or key=value string), shared by
// every chrono-sandbox replica that names it. Connects at once: an
// unreachable database or a refused login is Unavailable with libpq's
// reason (never the connection string, which may hold a password). Migrates
// the schema (table chrono_operations) to the current version itself;
// replicas starting at once are serialised by an advisory lock.
//
// Every method is one transaction, committed before it returns:
//  - CreateOrGet is one INSERT … ON CONFLICT (owner, idempotency_key_hash)
//    DO NOTHING: concurrent creators on any replica make exactly one row; the
//    losers read the winner's. Same preconditions as the SQLite store
//    (InvalidArgument for a non-fresh operation; an id collision is
//    Internal).
//  - ClaimNext takes the oldest queued row with FOR UPDATE SKIP LOCKED, so
//    replicas claiming at once never wait on, or take, the same row.
//  - ExpireOld runs on one replica at a time: a call that finds another
//    replica's sweep in progress (an advisory lock) expires nothing, returns 0.
//  - Sealed credentials are stored as the bytes they are (BYTEA), still
//    sealed; they and the request are dropped when an operation ends.
// Storage errors: Unavailable (connection lost or refused, server shutting
// down, serialization failure) or Internal.
absl::StatusOr<std::unique_ptr<OperationStore>> OpenPostgresOperationStore(
    const std::string& conninfo);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_POSTGRES_OPERATION_STORE_H_
