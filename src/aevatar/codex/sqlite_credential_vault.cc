#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/codex/credential_sealing.h"
#include "aevatar/codex/credential_vault.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;

// Released migrations are never edited; append new ones.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE managed_codex_credentials (
  user_id         TEXT    NOT NULL PRIMARY KEY CHECK (user_id <> ''),
  key_id          TEXT    NOT NULL,
  chrono_route_id TEXT    NOT NULL,
  sealed_key      BLOB    NOT NULL,
  created_at_ms   INTEGER NOT NULL,
  updated_at_ms   INTEGER NOT NULL
) STRICT;
)sql"},
};

// One connection behind one mutex: credential writes are rare.
class SqliteCredentialVault final : public ManagedCredentialVault {
 public:
  SqliteCredentialVault(Database db, std::shared_ptr<const VaultKeyring> vault)
      : db_(std::move(db)), vault_(std::move(vault)) {}

  absl::StatusOr<std::optional<ManagedCredential>> Load(const std::string& user_id) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT key_id, chrono_route_id, sealed_key, created_at_ms, updated_at_ms "
        "FROM managed_codex_credentials WHERE user_id = ?1",
        {user_id});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<ManagedCredential>();
    ManagedCredential credential;
    credential.key_id = stmt->ColumnText(0);
    credential.chrono_route_id = stmt->ColumnText(1);
    credential.created_at_ms = stmt->ColumnInt64(3);
    credential.updated_at_ms = stmt->ColumnInt64(4);
    auto secret = OpenManagedKey(*vault_, stmt->ColumnBlob(2), user_id);
    if (!secret.ok()) return secret.status();
    credential.secret = std::move(*secret);
    return std::optional<ManagedCredential>(std::move(credential));
  }

  absl::Status Store(const std::string& user_id, const ManagedCredential& credential) override {
    const std::string sealed = SealManagedKey(*vault_, user_id, credential.secret);
    absl::MutexLock lock(&mu_);
    auto changed = db_.Run(
        "INSERT INTO managed_codex_credentials (user_id, key_id, chrono_route_id, sealed_key, "
        "created_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
        "ON CONFLICT (user_id) DO UPDATE SET key_id = ?2, chrono_route_id = ?3, "
        "sealed_key = ?4, updated_at_ms = ?6",
        {user_id, credential.key_id, credential.chrono_route_id, store::Blob(sealed),
         credential.created_at_ms, credential.updated_at_ms});
    return changed.status();
  }

 private:
  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ManagedCredentialVault>> OpenSqliteCredentialVault(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the credential vault needs a vault key");
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kMigrations); !st.ok()) return st;
  return std::unique_ptr<ManagedCredentialVault>(
      new SqliteCredentialVault(*std::move(db), std::move(vault)));
}

}  // namespace aevatar::orchestrator
