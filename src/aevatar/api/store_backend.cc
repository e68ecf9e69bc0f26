#include "aevatar/api/store_backend.h"

#include "aevatar/audit/sqlite_audit_log.h"
#include "aevatar/postgres/postgres_stores.h"
#include "store/store_spec.h"

namespace aevatar::orchestrator {

absl::StatusOr<StoreBackend> StoreBackend::Open(const std::string& spec,
                                                const std::string& state_dir) {
  if (store::NamesDefaultSqlite(spec)) return StoreBackend(state_dir, nullptr);
  std::optional<std::string> conninfo = store::PostgresConninfo(spec);
  if (!conninfo) {
    return absl::InvalidArgumentError(
        "--store must be sqlite (the default: files in the state directory), postgresql://… or "
        "postgres:CONNINFO");
  }
  auto pool = ConnectAevatarDatabase(*conninfo);
  if (!pool.ok()) return pool.status();
  return StoreBackend(state_dir, std::move(*pool));
}

absl::StatusOr<std::unique_ptr<WorkflowStore>> StoreBackend::OpenWorkflows() const {
  if (shared()) return OpenPostgresWorkflowStore(pool_);
  return OpenSqliteWorkflowStore(state_dir_ + "/workflows.db");
}

absl::StatusOr<std::unique_ptr<AuditLog>> StoreBackend::OpenAudit() const {
  if (shared()) return OpenPostgresAuditLog(pool_);
  return OpenSqliteAuditLog(state_dir_ + "/audit.db");
}

absl::StatusOr<std::unique_ptr<SkillStore>> StoreBackend::OpenSkills() const {
  if (shared()) return OpenPostgresSkillStore(pool_);
  return OpenSqliteSkillStore(state_dir_ + "/skills.db");
}

absl::StatusOr<std::unique_ptr<ApprovalStore>> StoreBackend::OpenApprovals(
    std::shared_ptr<const VaultKeyring> vault) const {
  if (shared()) return OpenPostgresApprovalStore(pool_, std::move(vault));
  return OpenSqliteApprovalStore(state_dir_ + "/approvals.db", std::move(vault));
}

absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> StoreBackend::OpenCredentials(
    std::shared_ptr<const VaultKeyring> vault) const {
  if (shared()) return OpenPostgresCredentialVault(pool_, std::move(vault));
  return OpenSqliteCredentialVault(state_dir_ + "/codex.db", std::move(vault));
}

absl::StatusOr<std::unique_ptr<TriggerStore>> StoreBackend::OpenTriggers(
    std::shared_ptr<const VaultKeyring> vault) const {
  if (shared()) return OpenPostgresTriggerStore(pool_, std::move(vault));
  return OpenSqliteTriggerStore(state_dir_ + "/triggers.db", std::move(vault));
}

}  // namespace aevatar::orchestrator
