#ifndef AEVATAR_AEVATAR_AUDIT_SQLITE_AUDIT_LOG_H_
#define AEVATAR_AEVATAR_AUDIT_SQLITE_AUDIT_LOG_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/audit/audit_log.h"

namespace aevatar::orchestrator {

// Returns an AuditLog kept in the SQLite file at `path` (created, mode 0600,
// if missing; schema migrated to the current version; ":memory:" for a
// private in-memory log). Appends are committed and fsynced (WAL,
// synchronous=FULL) before Append returns.
//
// Append-only at two levels: the implementation issues only INSERT and SELECT
// against the audit table, and the schema installs triggers that abort any
// UPDATE or DELETE on it, so even a hand-written statement cannot rewrite
// history.
//
// Several logs, in one process or several, may open the same file: each
// Append checks the slot and inserts inside one BEGIN IMMEDIATE transaction,
// and a UNIQUE index on the slot backs that up, so a slot is filled once.
//
// Beyond the AuditLog contract: a caller-supplied record_id that another slot
// already uses is AlreadyExists; a conflict is also logged (event
// "audit.append_conflict", ids and hashes only, never the fact).
absl::StatusOr<std::unique_ptr<AuditLog>> OpenSqliteAuditLog(const std::string& path);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_AUDIT_SQLITE_AUDIT_LOG_H_
