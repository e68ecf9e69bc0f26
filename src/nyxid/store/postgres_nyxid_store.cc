#include "nyxid/store/postgres_nyxid_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/crypto.h"
#include "nyxid/store/pg_rows.h"
#include "nyxid/store/postgres_nyxid.h"
#include "nyxid/store/store_rows.h"
#include "store/pg_migrations.h"

// Schema and opening of NyxID's PostgreSQL store, the admin audit log and
// the shared signing-key document. Columns are named as in the SQLite store
// (nyxid/store/store_rows.h reads both); flags are BOOLEAN, instants BIGINT
// Unix ms.
namespace aevatar::nyxid {
namespace {

// Released migrations are never edited; append new ones.
constexpr store::Migration kPostgresNyxidMigrations[] = {
    {1, R"sql(
CREATE TABLE nyxid_users (
  id                   TEXT    NOT NULL PRIMARY KEY,
  username             TEXT    NOT NULL UNIQUE,
  password_hash        TEXT    NOT NULL,
  platform_admin       BOOLEAN NOT NULL DEFAULT FALSE,
  created_at_ms        BIGINT  NOT NULL,
  tokens_not_before_ms BIGINT  NOT NULL DEFAULT 0
);
CREATE TABLE nyxid_orgs (
  id   TEXT NOT NULL PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL
);
CREATE TABLE nyxid_memberships (
  org_id  TEXT NOT NULL REFERENCES nyxid_orgs(id),
  user_id TEXT NOT NULL REFERENCES nyxid_users(id),
  role    TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX nyxid_memberships_by_user ON nyxid_memberships (user_id);
CREATE TABLE nyxid_catalog_services (
  id                      TEXT    NOT NULL PRIMARY KEY,
  slug                    TEXT    NOT NULL UNIQUE,
  name                    TEXT    NOT NULL,
  kind                    TEXT    NOT NULL,
  base_url                TEXT    NOT NULL,
  forward_access_token    BOOLEAN NOT NULL,
  inject_delegation_token BOOLEAN NOT NULL,
  delegation_token_scope  TEXT    NOT NULL,
  auto_connect            BOOLEAN NOT NULL,
  provider_api_key_sealed TEXT    NOT NULL DEFAULT '',
  model_allowlist         TEXT    NOT NULL DEFAULT '[]',
  delegation_audiences    TEXT    NOT NULL DEFAULT '[]',
  allow_link_local        BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE TABLE nyxid_user_services (
  id                        TEXT    NOT NULL PRIMARY KEY,
  slug                      TEXT    NOT NULL,
  label                     TEXT    NOT NULL,
  catalog_service_id        TEXT    REFERENCES nyxid_catalog_services(id),
  owner_kind                TEXT    NOT NULL,
  owner_id                  TEXT    NOT NULL,
  active                    BOOLEAN NOT NULL,
  forward_access_token      BOOLEAN NOT NULL,
  inject_delegation_token   BOOLEAN NOT NULL,
  delegation_token_scope    TEXT    NOT NULL,
  auto_connected            BOOLEAN NOT NULL,
  credential_source_allowed BOOLEAN NOT NULL,
  node_id                   TEXT,
  base_url                  TEXT    NOT NULL,
  created_at_ms             BIGINT  NOT NULL,
  updated_at_ms             BIGINT  NOT NULL,
  UNIQUE (owner_kind, owner_id, slug),
  UNIQUE (owner_kind, owner_id, label)
);
CREATE INDEX nyxid_user_services_by_catalog ON nyxid_user_services (catalog_service_id);
CREATE TABLE nyxid_agent_keys (
  id               TEXT   NOT NULL PRIMARY KEY,
  user_id          TEXT   NOT NULL REFERENCES nyxid_users(id),
  label            TEXT   NOT NULL,
  key_hash         TEXT   NOT NULL UNIQUE,
  key_prefix       TEXT   NOT NULL,
  allowed_services TEXT   NOT NULL,
  created_at_ms    BIGINT NOT NULL,
  revoked_at_ms    BIGINT
);
CREATE INDEX nyxid_agent_keys_by_user ON nyxid_agent_keys (user_id);
CREATE TABLE nyxid_clients (
  name          TEXT NOT NULL PRIMARY KEY,
  secret_sha256 TEXT NOT NULL UNIQUE
);
-- The admin audit log, append-only: the triggers refuse any change.
CREATE TABLE nyxid_admin_audit (
  seq         BIGSERIAL PRIMARY KEY,
  at_ms       BIGINT NOT NULL,
  actor       TEXT   NOT NULL,
  action      TEXT   NOT NULL,
  target_type TEXT   NOT NULL,
  target_id   TEXT   NOT NULL,
  detail      TEXT   NOT NULL
);
CREATE FUNCTION nyxid_admin_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the admin audit log is append-only';
END $$;
CREATE TRIGGER nyxid_admin_audit_no_change BEFORE UPDATE OR DELETE ON nyxid_admin_audit
  FOR EACH ROW EXECUTE FUNCTION nyxid_admin_audit_refuse();
CREATE TRIGGER nyxid_admin_audit_no_truncate BEFORE TRUNCATE ON nyxid_admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION nyxid_admin_audit_refuse();
-- The signing-key document (tokens/signing_keys.h), sealed; '' before the
-- first key. One row, so that SELECT … FOR UPDATE serialises its writers.
CREATE TABLE nyxid_signing_keys (
  id       INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  document TEXT    NOT NULL
);
INSERT INTO nyxid_signing_keys (id, document) VALUES (1, '');
-- Nodes (nodes/node_store.h).
CREATE TABLE nyxid_registration_tokens (
  token_hash    TEXT   NOT NULL PRIMARY KEY,
  user_id       TEXT   NOT NULL,
  node_name     TEXT   NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  used_at_ms    BIGINT
);
CREATE TABLE nyxid_nodes (
  id            TEXT   NOT NULL PRIMARY KEY,
  user_id       TEXT   NOT NULL,
  name          TEXT   NOT NULL,
  secret_hash   TEXT   NOT NULL UNIQUE,
  created_at_ms BIGINT NOT NULL,
  last_seen_ms  BIGINT NOT NULL,
  UNIQUE (user_id, name)
);
CREATE TABLE nyxid_ssh_targets (
  user_service_id TEXT    NOT NULL PRIMARY KEY,
  host            TEXT    NOT NULL,
  port            INTEGER NOT NULL,
  principals      TEXT    NOT NULL
);
)sql"},
    {2, R"sql(
-- The facts generation (NyxidStore::FactsGeneration): every statement that
-- changes a table a caller's /me and /keys derive from moves it in its own
-- transaction, on whichever replica it runs, to at least the wall clock in
-- microseconds, so a restored database never climbs back through numbers a
-- running replica remembered for other facts.
CREATE TABLE nyxid_facts_generation (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  n  BIGINT  NOT NULL
);
INSERT INTO nyxid_facts_generation (id, n) VALUES (1, 0);
CREATE FUNCTION nyxid_move_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE nyxid_facts_generation
    SET n = GREATEST(n + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
    WHERE id = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER nyxid_users_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_users FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
CREATE TRIGGER nyxid_orgs_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_orgs FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
CREATE TRIGGER nyxid_memberships_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_memberships FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
CREATE TRIGGER nyxid_catalog_services_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_catalog_services FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
CREATE TRIGGER nyxid_user_services_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_user_services FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
CREATE TRIGGER nyxid_agent_keys_move_facts AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON nyxid_agent_keys FOR EACH STATEMENT EXECUTE FUNCTION nyxid_move_facts();
)sql"},
};

constexpr char kKeyDocumentName[] = "the signing keys in table nyxid_signing_keys";

// The signing-key document, sealed under the at-rest key in one row.
class PostgresSigningKeys final : public SigningKeyStorage {
 public:
  PostgresSigningKeys(std::shared_ptr<store::PgPool> pool, std::string at_rest_key)
      : pool_(std::move(pool)), at_rest_key_(std::move(at_rest_key)) {}

  absl::StatusOr<std::string> Read() override {
    auto sealed =
        pool_->TransactFor<std::string>([](pqxx::work& tx) -> absl::StatusOr<std::string> {
          return tx.exec("SELECT document FROM nyxid_signing_keys WHERE id = 1")[0][0]
              .as<std::string>();
        });
    if (!sealed.ok()) return pg_rows::Scrubbed(sealed.status(), "signing keys");
    auto opened = Open(*sealed);
    if (!opened.ok()) return opened.status();
    if (!*opened) return absl::NotFoundError("no signing keys yet");
    return **opened;
  }

  absl::Status Update(const Change& change) override {
    return pg_rows::Scrubbed(pool_->Transact([&](pqxx::work& tx) -> absl::Status {
      // The row lock serialises replicas rotating at once.
      const std::string sealed =
          tx.exec("SELECT document FROM nyxid_signing_keys WHERE id = 1 FOR UPDATE")[0][0]
              .as<std::string>();
      auto current = Open(sealed);
      if (!current.ok()) return current.status();
      auto next = change(*current);
      if (!next.ok()) return next.status();
      if (*current && *next == **current) return absl::OkStatus();
      tx.exec_params("UPDATE nyxid_signing_keys SET document = $1 WHERE id = 1",
                     base::Base64UrlEncode(base::SecretBoxSeal(at_rest_key_, *next)));
      return absl::OkStatus();
    }),
                             "signing keys");
  }

  bool shared() const override { return true; }
  std::string name() const override { return kKeyDocumentName; }

 private:
  // nullopt for the empty document (no keys yet).
  absl::StatusOr<std::optional<std::string>> Open(const std::string& sealed) const {
    if (sealed.empty()) return std::nullopt;
    auto raw = base::Base64UrlDecode(sealed);
    if (!raw.ok()) return absl::DataLossError(absl::StrCat(kKeyDocumentName, " are corrupt"));
    auto plain = base::SecretBoxOpen(at_rest_key_, *raw);
    if (!plain.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(kKeyDocumentName,
                       " were sealed under another at-rest key: every replica needs the same "
                       "<state-dir>/at-rest.key (copy it from the first replica)"));
    }
    return std::optional<std::string>(*std::move(plain));
  }

  const std::shared_ptr<store::PgPool> pool_;
  const std::string at_rest_key_;
};

}  // namespace

namespace pg_rows {

absl::Status Scrubbed(absl::Status status, const char* what) {
  if (status.ok() || absl::IsNotFound(status) || absl::IsDataLoss(status) ||
      absl::IsFailedPrecondition(status)) {
    return status;
  }
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(absl::StrCat(what, " already exists"));
  }
  const std::string first_line(*absl::StrSplit(status.message(), '\n').begin());
  return absl::Status(status.code(), first_line);
}

}  // namespace pg_rows

absl::Status PostgresNyxidStore::AppendAdminAudit(const AdminAuditEntry& entry) {
  // A sequence hands out numbers at insert, not at commit: two appenders
  // could commit 42 before 41, and a reader paging with next_after=42 would
  // never see 41. Appenders take turns, so seq order is commit order.
  return pg_rows::Scrubbed(pool_->Transact([&](pqxx::work& tx) {
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext('nyxid_admin_audit'))",
                   store::kPgAdvisoryLockSpace);
    tx.exec_params(
        "INSERT INTO nyxid_admin_audit (at_ms, actor, action, target_type, target_id, detail) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        entry.at_ms, entry.actor, entry.action, entry.target_type, entry.target_id, entry.detail);
    return absl::OkStatus();
  }),
                           "audit entry");
}

absl::StatusOr<std::vector<AdminAuditEntry>> PostgresNyxidStore::ListAdminAudit(int64_t after_seq,
                                                                                int limit) {
  return pg_rows::All<AdminAuditEntry>(
      *pool_, "audit entry",
      absl::StrCat("SELECT ", rows::kAuditColumns,
                   " FROM nyxid_admin_audit WHERE seq > $1 ORDER BY seq LIMIT $2"),
      rows::AuditFromRow<pg_rows::PgRow>, after_seq, int64_t{limit});
}

absl::StatusOr<int64_t> PostgresNyxidStore::FactsGeneration() {
  auto generation = pool_->TransactFor<int64_t>([](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return tx.exec("SELECT n FROM nyxid_facts_generation WHERE id = 1")[0][0].as<int64_t>();
  });
  if (!generation.ok()) return pg_rows::Scrubbed(generation.status(), "facts generation");
  return generation;
}

absl::Status PostgresNyxidStore::Ping() {
  return pg_rows::Scrubbed(pool_->Transact([](pqxx::work& tx) {
    tx.exec("SELECT 1");
    return absl::OkStatus();
  }),
                           "ping");
}

absl::StatusOr<PostgresNyxid> OpenPostgresNyxid(const std::string& conninfo,
                                                std::string at_rest_key) {
  if (at_rest_key.size() != 32) {
    return absl::InvalidArgumentError("the store's at-rest key must be 32 bytes");
  }
  auto pool = store::PgPool::Connect(conninfo);
  if (!pool.ok()) return pool.status();
  std::shared_ptr<store::PgPool> shared = std::move(*pool);
  if (absl::Status st = store::ApplyPgMigrations(*shared, "nyxid", kPostgresNyxidMigrations);
      !st.ok()) {
    return st;
  }
  PostgresNyxid out;
  out.store = std::make_unique<PostgresNyxidStore>(shared, at_rest_key);
  out.nodes = NewPostgresNodeStore(shared);
  out.signing_keys = std::make_unique<PostgresSigningKeys>(shared, std::move(at_rest_key));
  return out;
}

}  // namespace aevatar::nyxid
