#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nyxid/nodes/node_store.h"
#include "nyxid/store/sqlite_rows.h"
#include "nyxid/store/store_rows.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::nyxid {
namespace {

using store::Database;

// Released migrations are never edited; append new ones.
constexpr store::Migration kNodeStoreMigrations[] = {
    {1, R"sql(
CREATE TABLE registration_tokens (
  token_hash    TEXT    NOT NULL PRIMARY KEY,
  user_id       TEXT    NOT NULL,
  node_name     TEXT    NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  used_at_ms    INTEGER
) STRICT;
CREATE TABLE nodes (
  id            TEXT    NOT NULL PRIMARY KEY,
  user_id       TEXT    NOT NULL,
  name          TEXT    NOT NULL,
  secret_hash   TEXT    NOT NULL UNIQUE,
  created_at_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  UNIQUE (user_id, name)
) STRICT;
CREATE TABLE ssh_targets (
  user_service_id TEXT    NOT NULL PRIMARY KEY,
  host            TEXT    NOT NULL,
  port            INTEGER NOT NULL,
  principals      TEXT    NOT NULL
) STRICT;
)sql"},
};

using rows::kNodeColumns;
using sqlite_rows::All;
using sqlite_rows::One;
using sqlite_rows::SqliteRow;

class SqliteNodeStore final : public NodeStore {
 public:
  explicit SqliteNodeStore(Database db) : db_(std::move(db)) {}

  absl::Status InsertToken(const NodeRegistrationToken& token) override {
    absl::MutexLock lock(&mu_);
    // Expired tokens go as new ones come: the table stays small.
    if (auto gone = db_.Run("DELETE FROM registration_tokens WHERE expires_at_ms < ?1",
                            {token.expires_at_ms - kKeepExpiredMs});
        !gone.ok()) {
      return gone.status();
    }
    return db_
        .Run("INSERT INTO registration_tokens VALUES (?1, ?2, ?3, ?4, NULL)",
             {token.token_hash_hex, token.user_id, token.node_name, token.expires_at_ms})
        .status();
  }

  absl::StatusOr<NodeRegistrationToken> ConsumeToken(const std::string& token_hash_hex,
                                                     int64_t now_ms) override {
    absl::MutexLock lock(&mu_);
    auto used = db_.Run(
        "UPDATE registration_tokens SET used_at_ms = ?2 "
        "WHERE token_hash = ?1 AND used_at_ms IS NULL AND expires_at_ms > ?2",
        {token_hash_hex, now_ms});
    if (!used.ok()) return used.status();
    if (*used != 1) return absl::NotFoundError("no usable registration token");
    return One<NodeRegistrationToken>(
        db_.Prepare(absl::StrCat("SELECT ", rows::kTokenColumns,
                                 " FROM registration_tokens WHERE token_hash = ?1"),
                    {token_hash_hex}),
        rows::TokenFromRow<SqliteRow>, "registration token");
  }

  absl::Status InsertNode(const NodeRecord& node) override {
    absl::MutexLock lock(&mu_);
    return db_
        .Run("INSERT INTO nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
             {node.id, node.user_id, node.name, node.secret_hash_hex, node.created_at_ms,
              node.last_seen_ms})
        .status();
  }

  absl::StatusOr<NodeRecord> FindNode(const std::string& id) override {
    return FindOne(absl::StrCat("SELECT ", kNodeColumns, " FROM nodes WHERE id = ?1"), id);
  }

  absl::StatusOr<NodeRecord> FindNodeBySecretHash(const std::string& secret_hash_hex) override {
    return FindOne(absl::StrCat("SELECT ", kNodeColumns, " FROM nodes WHERE secret_hash = ?1"),
                   secret_hash_hex);
  }

  absl::StatusOr<std::vector<NodeRecord>> ListNodes(const std::string& user_id) override {
    absl::MutexLock lock(&mu_);
    return All<NodeRecord>(
        db_.Prepare(absl::StrCat("SELECT ", kNodeColumns,
                                 " FROM nodes WHERE user_id = ?1 ORDER BY created_at_ms, id"),
                    {user_id}),
        rows::NodeFromRow<SqliteRow>);
  }

  absl::Status TouchNode(const std::string& id, int64_t now_ms) override {
    absl::MutexLock lock(&mu_);
    return db_.Run("UPDATE nodes SET last_seen_ms = ?2 WHERE id = ?1", {id, now_ms}).status();
  }

  absl::Status DeleteNode(const std::string& user_id, const std::string& id) override {
    absl::MutexLock lock(&mu_);
    auto gone = db_.Run("DELETE FROM nodes WHERE id = ?1 AND user_id = ?2", {id, user_id});
    if (!gone.ok()) return gone.status();
    return *gone == 1 ? absl::OkStatus() : absl::NotFoundError("no such node");
  }

  absl::Status PutSshTarget(const SshTarget& target) override {
    absl::MutexLock lock(&mu_);
    const std::string principals = rows::StringListColumn(target.principals);
    return db_
        .Run("INSERT OR REPLACE INTO ssh_targets VALUES (?1, ?2, ?3, ?4)",
             {target.user_service_id, target.host, int64_t{target.port}, principals})
        .status();
  }

  absl::StatusOr<SshTarget> FindSshTarget(const std::string& user_service_id) override {
    absl::MutexLock lock(&mu_);
    auto target = One<absl::StatusOr<SshTarget>>(
        db_.Prepare(absl::StrCat("SELECT ", rows::kSshTargetColumns,
                                 " FROM ssh_targets WHERE user_service_id = ?1"),
                    {user_service_id}),
        rows::SshTargetFromRow<SqliteRow>, "SSH target for this service");
    if (!target.ok()) return target.status();
    return *std::move(target);
  }

 private:
  // Used and expired tokens stay a day (a replayed token reads "not usable").
  static constexpr int64_t kKeepExpiredMs = int64_t{24} * 3600 * 1000;

  absl::StatusOr<NodeRecord> FindOne(const std::string& sql, const std::string& key) {
    absl::MutexLock lock(&mu_);
    return One<NodeRecord>(db_.Prepare(sql, {key}), rows::NodeFromRow<SqliteRow>, "node");
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<NodeStore>> OpenSqliteNodeStore(const std::string& path) {
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kNodeStoreMigrations); !st.ok()) return st;
  return std::unique_ptr<NodeStore>(new SqliteNodeStore(std::move(*db)));
}

}  // namespace aevatar::nyxid
