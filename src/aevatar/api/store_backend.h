#ifndef AEVATAR_AEVATAR_API_STORE_BACKEND_H_
#define AEVATAR_AEVATAR_API_STORE_BACKEND_H_

#include <memory>
#include <string>
#include <utility>

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

// Where `aevatar serve` keeps its state (`--store`): SQLite files in the
// state directory (the default: one process), or one PostgreSQL database
// shared by several replicas (aevatar/postgres/postgres_stores.h).
namespace aevatar::orchestrator {

class StoreBackend {
 public:
  // Parses `spec`: "" or "sqlite" (files in `state_dir`), "postgresql://…"
  // or "postgres://…" (a libpq URI as it is), or "postgres:CONNINFO" (any
  // libpq connection string). For PostgreSQL, connects at once:
  // Unavailable with libpq's reason (never the connection string) when the
  // database cannot be reached. InvalidArgument for any other spec.
  static absl::StatusOr<StoreBackend> Open(const std::string& spec, const std::string& state_dir);

  // Whether the state is in PostgreSQL (shared by replicas).
  bool shared() const { return pool_ != nullptr; }
  // "sqlite" or "postgresql", for logs.
  const char* name() const { return shared() ? "postgresql" : "sqlite"; }

  // Each store on this backend; the sealed ones seal with `vault`.
  absl::StatusOr<std::unique_ptr<WorkflowStore>> OpenWorkflows() const;
  absl::StatusOr<std::unique_ptr<AuditLog>> OpenAudit() const;
  absl::StatusOr<std::unique_ptr<SkillStore>> OpenSkills() const;
  absl::StatusOr<std::unique_ptr<ApprovalStore>> OpenApprovals(
      std::shared_ptr<const VaultKeyring> vault) const;
  absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> OpenCredentials(
      std::shared_ptr<const VaultKeyring> vault) const;
  absl::StatusOr<std::unique_ptr<TriggerStore>> OpenTriggers(
      std::shared_ptr<const VaultKeyring> vault) const;

 private:
  StoreBackend(std::string state_dir, std::shared_ptr<store::PgPool> pool)
      : state_dir_(std::move(state_dir)), pool_(std::move(pool)) {}

  std::string state_dir_;
  std::shared_ptr<store::PgPool> pool_;  // null for SQLite
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_STORE_BACKEND_H_
