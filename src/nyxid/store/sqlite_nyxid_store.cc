#include "nyxid/store/sqlite_nyxid_store.h"

#include <array>

#include "store/migrations.h"

// Schema and opening of the broker's SQLite store. Migrations are append-only.
namespace aevatar::nyxid {
namespace {

constexpr char kSchemaV1[] = R"sql(
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  platform_admin INTEGER NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL
);
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL
);
CREATE TABLE memberships (
  org_id TEXT NOT NULL REFERENCES orgs(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  role TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_by_user ON memberships(user_id);
CREATE TABLE catalog_services (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  base_url TEXT NOT NULL,
  forward_access_token INTEGER NOT NULL,
  inject_delegation_token INTEGER NOT NULL,
  delegation_token_scope TEXT NOT NULL,
  auto_connect INTEGER NOT NULL
);
CREATE TABLE user_services (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL,
  label TEXT NOT NULL,
  catalog_service_id TEXT REFERENCES catalog_services(id),
  owner_kind TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  active INTEGER NOT NULL,
  forward_access_token INTEGER NOT NULL,
  inject_delegation_token INTEGER NOT NULL,
  delegation_token_scope TEXT NOT NULL,
  auto_connected INTEGER NOT NULL,
  credential_source_allowed INTEGER NOT NULL,
  node_id TEXT,
  base_url TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  UNIQUE (owner_kind, owner_id, slug),
  UNIQUE (owner_kind, owner_id, label)
);
CREATE INDEX user_services_by_catalog ON user_services(catalog_service_id);
CREATE TABLE agent_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  label TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  allowed_services TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  revoked_at_ms INTEGER
);
CREATE INDEX agent_keys_by_user ON agent_keys(user_id);
CREATE TABLE clients (
  name TEXT PRIMARY KEY,
  secret_sha256 TEXT NOT NULL UNIQUE
);
)sql";

// v2: catalog services of kind llm (the provider key, sealed; the model
// allowlist as a JSON array of strings).
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE catalog_services ADD COLUMN provider_api_key_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE catalog_services ADD COLUMN model_allowlist TEXT NOT NULL DEFAULT '[]';
)sql";

// v3: a user's access and delegation tokens issued before this instant are
// revoked (logout, password change).
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE users ADD COLUMN tokens_not_before_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// v4: the admin audit log, append-only: the triggers refuse any change.
constexpr char kSchemaV4[] = R"sql(
CREATE TABLE admin_audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id TEXT NOT NULL,
  detail TEXT NOT NULL
);
CREATE TRIGGER admin_audit_no_update BEFORE UPDATE ON admin_audit
  BEGIN SELECT RAISE(ABORT, 'the admin audit log is append-only'); END;
CREATE TRIGGER admin_audit_no_delete BEFORE DELETE ON admin_audit
  BEGIN SELECT RAISE(ABORT, 'the admin audit log is append-only'); END;
)sql";

// v5: the delegation audiences a catalog service admits (a JSON array of
// catalog slugs) and whether its upstream may be link-local.
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE catalog_services ADD COLUMN delegation_audiences TEXT NOT NULL DEFAULT '[]';
ALTER TABLE catalog_services ADD COLUMN allow_link_local INTEGER NOT NULL DEFAULT 0;
)sql";

// v6: the facts generation (NyxidStore::FactsGeneration). Every insert,
// update or delete in a table a caller's /me and /keys derive from moves it
// in the change's own transaction, whichever process or connection writes.
// It moves to at least the wall clock in microseconds, so a database
// restored from a backup never climbs back through numbers a running
// broker remembered for other facts.
constexpr char kSchemaV6[] = R"sql(
CREATE TABLE facts_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n INTEGER NOT NULL
);
INSERT INTO facts_generation (id, n) VALUES (1, 0);
CREATE TRIGGER users_moves_facts_insert AFTER INSERT ON users
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER users_moves_facts_update AFTER UPDATE ON users
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER users_moves_facts_delete AFTER DELETE ON users
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER orgs_moves_facts_insert AFTER INSERT ON orgs
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER orgs_moves_facts_update AFTER UPDATE ON orgs
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER orgs_moves_facts_delete AFTER DELETE ON orgs
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER memberships_moves_facts_insert AFTER INSERT ON memberships
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER memberships_moves_facts_update AFTER UPDATE ON memberships
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER memberships_moves_facts_delete AFTER DELETE ON memberships
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER catalog_services_moves_facts_insert AFTER INSERT ON catalog_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER catalog_services_moves_facts_update AFTER UPDATE ON catalog_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER catalog_services_moves_facts_delete AFTER DELETE ON catalog_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER user_services_moves_facts_insert AFTER INSERT ON user_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER user_services_moves_facts_update AFTER UPDATE ON user_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER user_services_moves_facts_delete AFTER DELETE ON user_services
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER agent_keys_moves_facts_insert AFTER INSERT ON agent_keys
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER agent_keys_moves_facts_update AFTER UPDATE ON agent_keys
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
CREATE TRIGGER agent_keys_moves_facts_delete AFTER DELETE ON agent_keys
  BEGIN UPDATE facts_generation SET n = max(n + 1, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)); END;
)sql";

constexpr std::array<store::Migration, 6> kMigrations = {{{1, kSchemaV1},
                                                          {2, kSchemaV2},
                                                          {3, kSchemaV3},
                                                          {4, kSchemaV4},
                                                          {5, kSchemaV5},
                                                          {6, kSchemaV6}}};

}  // namespace

absl::Status BindOptional(store::Statement& statement, int index,
                          const std::optional<std::string>& value) {
  return value ? statement.BindText(index, *value) : statement.BindNull(index);
}

absl::Status SqliteNyxidStore::AppendAdminAudit(const AdminAuditEntry& entry) {
  absl::MutexLock lock(&mu_);
  return db_
      .Run(
          "INSERT INTO admin_audit (at_ms, actor, action, target_type, target_id, detail) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
          {entry.at_ms, entry.actor, entry.action, entry.target_type, entry.target_id,
           entry.detail})
      .status();
}

absl::StatusOr<std::vector<AdminAuditEntry>> SqliteNyxidStore::ListAdminAudit(int64_t after_seq,
                                                                              int limit) {
  absl::MutexLock lock(&mu_);
  auto rows = db_.Prepare(
      "SELECT seq, at_ms, actor, action, target_type, target_id, detail FROM admin_audit "
      "WHERE seq > ?1 ORDER BY seq LIMIT ?2",
      {after_seq, int64_t{limit}});
  if (!rows.ok()) return rows.status();
  std::vector<AdminAuditEntry> entries;
  while (true) {
    auto more = rows->Step();
    if (!more.ok()) return more.status();
    if (!*more) return entries;
    entries.push_back({rows->ColumnInt64(0), rows->ColumnInt64(1), rows->ColumnText(2),
                       rows->ColumnText(3), rows->ColumnText(4), rows->ColumnText(5),
                       rows->ColumnText(6)});
  }
}

absl::StatusOr<int64_t> SqliteNyxidStore::FactsGeneration() {
  absl::MutexLock lock(&mu_);
  return db_.QueryInt64("SELECT n FROM facts_generation WHERE id = 1");
}

absl::Status SqliteNyxidStore::Ping() {
  absl::MutexLock lock(&mu_);
  return db_.QueryInt64("SELECT 1").status();
}

absl::StatusOr<std::unique_ptr<NyxidStore>> OpenSqliteNyxidStore(const std::string& path,
                                                                 std::string at_rest_key) {
  if (at_rest_key.size() != 32) {
    return absl::InvalidArgumentError("the store's at-rest key must be 32 bytes");
  }
  auto db = store::Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kMigrations); !st.ok()) return st;
  return std::unique_ptr<NyxidStore>(new SqliteNyxidStore(std::move(*db), std::move(at_rest_key)));
}

}  // namespace aevatar::nyxid
