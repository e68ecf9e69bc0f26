#ifndef AEVATAR_CHRONO_SQLITE_OPERATION_STORE_H_
#define AEVATAR_CHRONO_SQLITE_OPERATION_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "chrono/operation_store.h"

namespace aevatar::chrono {

// Returns an OperationStore kept in the SQLite file at `path` (created, mode
// 0600, if missing; schema migrated to the current version). The embedded
// default for a single instance. Commits are fsynced (WAL, synchronous=FULL)
// before a method returns.
//
// Several stores, in one process or several, may open the same file: writes
// take SQLite's write lock (BEGIN IMMEDIATE) and wait up to the busy timeout
// for it, so CreateOrGet and ClaimNext stay exclusive across them.
//
// Beyond the OperationStore contract:
//  - CreateOrGet requires a fresh operation (non-empty id, owner and key
//    hash; status queued; version 1; no start/finish time, result, claimer,
//    cancel request or expiry) and returns InvalidArgument otherwise. A
//    different stored operation with the same id is Internal (ids are random;
//    another owner's operation is never returned).
//  - Finish requires a terminal status; ExpireOld requires
//    tombstone_keep_ms >= 0. InvalidArgument otherwise.
//  - Storage errors are Unavailable (busy, I/O, disk full) or Internal.
absl::StatusOr<std::unique_ptr<OperationStore>> OpenSqliteOperationStore(const std::string& path);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_SQLITE_OPERATION_STORE_H_
