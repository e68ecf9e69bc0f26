#ifndef AEVATAR_AEVATAR_POSTGRES_POSTGRES_STORES_H_
#define AEVATAR_AEVATAR_POSTGRES_POSTGRES_STORES_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/approvals/approval_store.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/skills/skill_store.h"
#include "aevatar/triggers/trigger_store.h"
#include "aevatar/vault/vault_keyring.h"

namespace aevatar::store {
class PgPool;
}  // namespace aevatar::store

// aevatar's stores in one PostgreSQL database, shared by every aevatar
// replica that names it (and possibly by chrono-sandbox and NyxID: every
// table is prefixed aevatar_). Each Open migrates its own tables (component
// "aevatar.<store>" in aevatar_schema; replicas starting at once are
// serialised by an advisory lock) and then keeps the same contract as its
// SQLite twin (the contract suites under tests/aevatar run on both). Every
// call is one transaction on a pooled connection, committed before it
// returns. Storage errors as store::PgPool: Unavailable (connection lost,
// server shutting down; a retry may succeed), Unknown (commit outcome
// unknown), Internal. Sealed columns are BYTEA, still sealed.
namespace aevatar::orchestrator {

// Connects to `conninfo` (a libpq URI, postgresql://user@host/db, or
// key=value string) with a pool sized for one aevatar process. Unavailable
// with libpq's reason when the database cannot be reached; the message
// never holds the connection string (it may carry a password).
absl::StatusOr<std::shared_ptr<store::PgPool>> ConnectAevatarDatabase(const std::string& conninfo);

// Workflows, runs, events, callbacks and the runtime's sealed material.
// ClaimDueCallbacks takes the runs' rows FOR UPDATE SKIP LOCKED, so
// replicas claiming at once never wait on, or take, the same run.
absl::StatusOr<std::unique_ptr<WorkflowStore>> OpenPostgresWorkflowStore(
    std::shared_ptr<store::PgPool> pool);

// The append-only audit log: an INSERT … ON CONFLICT (slot) DO NOTHING,
// then a read of the slot, so concurrent appenders on any replica fill a
// slot once; triggers refuse UPDATE, DELETE and TRUNCATE of the table.
absl::StatusOr<std::unique_ptr<AuditLog>> OpenPostgresAuditLog(std::shared_ptr<store::PgPool> pool);

// Approvals, their calls sealed with `vault` (required).
absl::StatusOr<std::unique_ptr<ApprovalStore>> OpenPostgresApprovalStore(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault);

// Managed codex credentials, sealed with `vault` (required).
absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> OpenPostgresCredentialVault(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault);

// The skill registry: names, published versions and mounts. Publish locks
// the name's row, so publishers of one name on any replica take turns.
absl::StatusOr<std::unique_ptr<SkillStore>> OpenPostgresSkillStore(
    std::shared_ptr<store::PgPool> pool);
// Workflow triggers (schedules, webhooks, their fired slots and seen
// deliveries), webhook secrets sealed with `vault` (required).
absl::StatusOr<std::unique_ptr<TriggerStore>> OpenPostgresTriggerStore(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_POSTGRES_POSTGRES_STORES_H_
