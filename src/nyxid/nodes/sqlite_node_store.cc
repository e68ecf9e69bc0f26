#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/json_read.h"
#include "nlohmann/json.hpp"
#include "nyxid/nodes/node_store.h"
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

constexpr char kNodeColumns[] = "id, user_id, name, secret_hash, created_at_ms, last_seen_ms";

NodeRecord NodeFromRow(const store::Statement& row) {
  return NodeRecord{row.ColumnText(0), row.ColumnText(1),  row.ColumnText(2),
                    row.ColumnText(3), row.ColumnInt64(4), row.ColumnInt64(5)};
}

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
    auto row = db_.Prepare(
        "SELECT token_hash, user_id, node_name, expires_at_ms FROM registration_tokens "
        "WHERE token_hash = ?1",
        {token_hash_hex});
    if (!row.ok()) return row.status();
    auto found = row->Step();
    if (!found.ok()) return found.status();
    if (!*found) return absl::NotFoundError("no usable registration token");
    return NodeRegistrationToken{row->ColumnText(0), row->ColumnText(1), row->ColumnText(2),
                                 row->ColumnInt64(3)};
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
    return FindOne(std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE id = ?1", id);
  }

  absl::StatusOr<NodeRecord> FindNodeBySecretHash(const std::string& secret_hash_hex) override {
    return FindOne(std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE secret_hash = ?1",
                   secret_hash_hex);
  }

  absl::StatusOr<std::vector<NodeRecord>> ListNodes(const std::string& user_id) override {
    absl::MutexLock lock(&mu_);
    auto rows = db_.Prepare(std::string("SELECT ") + kNodeColumns +
                                " FROM nodes WHERE user_id = ?1 ORDER BY created_at_ms, id",
                            {user_id});
    if (!rows.ok()) return rows.status();
    std::vector<NodeRecord> nodes;
    while (true) {
      auto more = rows->Step();
      if (!more.ok()) return more.status();
      if (!*more) return nodes;
      nodes.push_back(NodeFromRow(*rows));
    }
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
    const std::string principals = nlohmann::json(target.principals).dump();
    return db_
        .Run("INSERT OR REPLACE INTO ssh_targets VALUES (?1, ?2, ?3, ?4)",
             {target.user_service_id, target.host, int64_t{target.port}, principals})
        .status();
  }

  absl::StatusOr<SshTarget> FindSshTarget(const std::string& user_service_id) override {
    absl::MutexLock lock(&mu_);
    auto row = db_.Prepare(
        "SELECT user_service_id, host, port, principals FROM ssh_targets "
        "WHERE user_service_id = ?1",
        {user_service_id});
    if (!row.ok()) return row.status();
    auto found = row->Step();
    if (!found.ok()) return found.status();
    if (!*found) return absl::NotFoundError("no SSH target for this service");
    SshTarget target{
        row->ColumnText(0), row->ColumnText(1), static_cast<int>(row->ColumnInt64(2)), {}};
    auto principals = base::ParseJson(row->ColumnText(3));
    if (!principals.ok() || !principals->is_array()) {
      return absl::DataLossError("ssh_targets.principals is not a JSON array");
    }
    for (const auto& principal : *principals) {
      if (!principal.is_string()) return absl::DataLossError("ssh_targets.principals: not text");
      target.principals.push_back(principal.get<std::string>());
    }
    return target;
  }

 private:
  // Used and expired tokens stay a day (a replayed token reads "not usable").
  static constexpr int64_t kKeepExpiredMs = int64_t{24} * 3600 * 1000;

  absl::StatusOr<NodeRecord> FindOne(const std::string& sql, const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto row = db_.Prepare(sql, {key});
    if (!row.ok()) return row.status();
    auto found = row->Step();
    if (!found.ok()) return found.status();
    if (!*found) return absl::NotFoundError("no such node");
    return NodeFromRow(*row);
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
