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

constexpr std::array<store::Migration, 2> kMigrations = {{{1, kSchemaV1}, {2, kSchemaV2}}};

}  // namespace

absl::Status BindOptional(store::Statement& statement, int index,
                          const std::optional<std::string>& value) {
  return value ? statement.BindText(index, *value) : statement.BindNull(index);
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
