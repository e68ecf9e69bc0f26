#include <utility>

#include "aevatar/codex/credential_sealing.h"
#include "aevatar/postgres/postgres_stores.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
constexpr store::Migration kCredentialMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_managed_codex_credentials (
  user_id         TEXT   NOT NULL PRIMARY KEY CHECK (user_id <> ''),
  key_id          TEXT   NOT NULL,
  chrono_route_id TEXT   NOT NULL,
  sealed_key      BYTEA  NOT NULL,
  created_at_ms   BIGINT NOT NULL,
  updated_at_ms   BIGINT NOT NULL
);
)sql"},
};

class PostgresCredentialVault final : public ManagedCredentialVault {
 public:
  PostgresCredentialVault(std::shared_ptr<PgPool> pool, std::shared_ptr<const VaultKeyring> vault)
      : pool_(std::move(pool)), vault_(std::move(vault)) {}

  absl::StatusOr<std::optional<ManagedCredential>> Load(const std::string& user_id) override {
    using Found = std::optional<ManagedCredential>;
    return pool_->TransactFor<Found>([&](pqxx::work& tx) -> absl::StatusOr<Found> {
      pqxx::result rows = tx.exec_params(
          "SELECT key_id, chrono_route_id, sealed_key, created_at_ms, updated_at_ms "
          "FROM aevatar_managed_codex_credentials WHERE user_id = $1",
          user_id);
      if (rows.empty()) return Found();
      const pqxx::row& r = rows[0];
      auto secret = OpenManagedKey(*vault_, pqxx::binarystring(r[2]).str(), user_id);
      if (!secret.ok()) return secret.status();
      return Found(ManagedCredential{r[0].as<std::string>(), r[1].as<std::string>(),
                                     std::move(*secret), r[3].as<int64_t>(), r[4].as<int64_t>()});
    });
  }

  absl::Status Store(const std::string& user_id, const ManagedCredential& credential) override {
    const std::string sealed = SealManagedKey(*vault_, user_id, credential.secret);
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(
          "INSERT INTO aevatar_managed_codex_credentials (user_id, key_id, chrono_route_id, "
          "sealed_key, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6) "
          "ON CONFLICT (user_id) DO UPDATE SET key_id = EXCLUDED.key_id, "
          "chrono_route_id = EXCLUDED.chrono_route_id, sealed_key = EXCLUDED.sealed_key, "
          "updated_at_ms = EXCLUDED.updated_at_ms",
          user_id, credential.key_id, credential.chrono_route_id, pqxx::binarystring(sealed),
          credential.created_at_ms, credential.updated_at_ms);
      return absl::OkStatus();
    });
  }

 private:
  std::shared_ptr<PgPool> pool_;
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<store::PgPool>> ConnectAevatarDatabase(const std::string& conninfo) {
  // HTTP threads, runtime workers, the dispatcher and the managed-codex
  // calls share it; beyond this many at once a caller waits for a connection.
  constexpr int kConnections = 16;
  auto pool = PgPool::Connect(conninfo, kConnections);
  if (!pool.ok()) return pool.status();
  return std::shared_ptr<PgPool>(std::move(*pool));
}

absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> OpenPostgresCredentialVault(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the credential vault needs a vault key");
  if (pool == nullptr) return absl::InvalidArgumentError("the credential vault needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.codex", kCredentialMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresCredentialVault>(std::move(pool), std::move(vault));
}

}  // namespace aevatar::orchestrator
