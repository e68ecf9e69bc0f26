#include "absl/strings/str_cat.h"
#include "nyxid/store/pg_rows.h"
#include "nyxid/store/postgres_nyxid_store.h"
#include "nyxid/store/store_rows.h"

// NodeStore on PostgreSQL: the tables nyxid_registration_tokens,
// nyxid_nodes and nyxid_ssh_targets (created by the migrations in
// store/postgres_nyxid_store.cc).
namespace aevatar::nyxid {
namespace {

using pg_rows::PgRow;

// Used and expired tokens stay a day (a replayed token reads "not usable").
constexpr int64_t kPgKeepExpiredTokenMs = int64_t{24} * 3600 * 1000;

class PostgresNodeStore final : public NodeStore {
 public:
  explicit PostgresNodeStore(std::shared_ptr<store::PgPool> pool) : pool_(std::move(pool)) {}

  absl::Status InsertToken(const NodeRegistrationToken& token) override {
    return pg_rows::Scrubbed(pool_->Transact([&](pqxx::work& tx) {
      // Expired tokens go as new ones come: the table stays small.
      tx.exec_params("DELETE FROM nyxid_registration_tokens WHERE expires_at_ms < $1",
                     token.expires_at_ms - kPgKeepExpiredTokenMs);
      tx.exec_params(
          "INSERT INTO nyxid_registration_tokens (token_hash, user_id, node_name, expires_at_ms) "
          "VALUES ($1, $2, $3, $4)",
          token.token_hash_hex, token.user_id, token.node_name, token.expires_at_ms);
      return absl::OkStatus();
    }),
                             "registration token");
  }

  absl::StatusOr<NodeRegistrationToken> ConsumeToken(const std::string& token_hash_hex,
                                                     int64_t now_ms) override {
    // One statement: of replicas consuming at once, exactly one gets the row.
    auto token = pg_rows::One<NodeRegistrationToken>(
        *pool_, "registration token",
        absl::StrCat("UPDATE nyxid_registration_tokens SET used_at_ms = $2 "
                     "WHERE token_hash = $1 AND used_at_ms IS NULL AND expires_at_ms > $2 "
                     "RETURNING ",
                     rows::kTokenColumns),
        rows::TokenFromRow<PgRow>, token_hash_hex, now_ms);
    if (absl::IsNotFound(token.status())) {
      return absl::NotFoundError("no usable registration token");
    }
    return token;
  }

  absl::Status InsertNode(const NodeRecord& node) override {
    return pg_rows::Exec(*pool_, "node",
                         absl::StrCat("INSERT INTO nyxid_nodes (", rows::kNodeColumns,
                                      ") VALUES ($1, $2, $3, $4, $5, $6)"),
                         node.id, node.user_id, node.name, node.secret_hash_hex, node.created_at_ms,
                         node.last_seen_ms)
        .status();
  }

  absl::StatusOr<NodeRecord> FindNode(const std::string& id) override {
    return pg_rows::One<NodeRecord>(
        *pool_, "node",
        absl::StrCat("SELECT ", rows::kNodeColumns, " FROM nyxid_nodes WHERE id = $1"),
        rows::NodeFromRow<PgRow>, id);
  }

  absl::StatusOr<NodeRecord> FindNodeBySecretHash(const std::string& secret_hash_hex) override {
    return pg_rows::One<NodeRecord>(
        *pool_, "node",
        absl::StrCat("SELECT ", rows::kNodeColumns, " FROM nyxid_nodes WHERE secret_hash = $1"),
        rows::NodeFromRow<PgRow>, secret_hash_hex);
  }

  absl::StatusOr<std::vector<NodeRecord>> ListNodes(const std::string& user_id) override {
    return pg_rows::All<NodeRecord>(
        *pool_, "node",
        absl::StrCat("SELECT ", rows::kNodeColumns,
                     " FROM nyxid_nodes WHERE user_id = $1 ORDER BY created_at_ms, id"),
        rows::NodeFromRow<PgRow>, user_id);
  }

  absl::Status TouchNode(const std::string& id, int64_t now_ms) override {
    return pg_rows::Exec(*pool_, "node", "UPDATE nyxid_nodes SET last_seen_ms = $2 WHERE id = $1",
                         id, now_ms)
        .status();
  }

  absl::Status DeleteNode(const std::string& user_id, const std::string& id) override {
    auto gone = pg_rows::Exec(
        *pool_, "node", "DELETE FROM nyxid_nodes WHERE id = $1 AND user_id = $2", id, user_id);
    if (!gone.ok()) return gone.status();
    return *gone == 1 ? absl::OkStatus() : absl::NotFoundError("node not found");
  }

  absl::Status PutSshTarget(const SshTarget& target) override {
    return pg_rows::Exec(*pool_, "SSH target",
                         absl::StrCat("INSERT INTO nyxid_ssh_targets (", rows::kSshTargetColumns,
                                      ") VALUES ($1, $2, $3, $4) ON CONFLICT (user_service_id) "
                                      "DO UPDATE SET host = EXCLUDED.host, port = EXCLUDED.port, "
                                      "principals = EXCLUDED.principals"),
                         target.user_service_id, target.host, target.port,
                         rows::StringListColumn(target.principals))
        .status();
  }

  absl::StatusOr<SshTarget> FindSshTarget(const std::string& user_service_id) override {
    return pg_rows::One<SshTarget>(
        *pool_, "SSH target for this service",
        absl::StrCat("SELECT ", rows::kSshTargetColumns,
                     " FROM nyxid_ssh_targets WHERE user_service_id = $1"),
        rows::SshTargetFromRow<PgRow>, user_service_id);
  }

 private:
  const std::shared_ptr<store::PgPool> pool_;
};

}  // namespace

std::unique_ptr<NodeStore> NewPostgresNodeStore(std::shared_ptr<store::PgPool> pool) {
  return std::make_unique<PostgresNodeStore>(std::move(pool));
}

}  // namespace aevatar::nyxid
