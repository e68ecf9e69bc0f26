#include <utility>

#include "absl/strings/str_cat.h"
#include "aevatar/approvals/approval_rows.h"
#include "aevatar/postgres/postgres_stores.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
constexpr store::Migration kApprovalMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_approvals (
  id            TEXT   NOT NULL PRIMARY KEY CHECK (id <> ''),
  owner         TEXT   NOT NULL CHECK (owner <> ''),
  tool          TEXT   NOT NULL,
  sealed_call   BYTEA  NOT NULL,
  call_digest   TEXT   NOT NULL,
  state         TEXT   NOT NULL
                CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'used')),
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  decided_at_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX aevatar_approvals_by_owner ON aevatar_approvals (owner, created_at_ms DESC);
)sql"},
};

ApprovalRow ReadApprovalRow(const pqxx::row& r) {
  return {r[0].as<std::string>(), r[1].as<std::string>(),
          r[2].as<std::string>(), pqxx::binarystring(r[3]).str(),
          r[4].as<std::string>(), r[5].as<std::string>(),
          r[6].as<int64_t>(),     r[7].as<int64_t>(),
          r[8].as<int64_t>()};
}

class PostgresApprovalStore final : public ApprovalStore {
 public:
  PostgresApprovalStore(std::shared_ptr<PgPool> pool, std::shared_ptr<const VaultKeyring> vault)
      : pool_(std::move(pool)), vault_(std::move(vault)) {}

  absl::Status Create(const Approval& approval) override {
    const std::string sealed = SealApprovalCall(*vault_, approval);
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(absl::StrCat("INSERT INTO aevatar_approvals (", kApprovalColumns,
                                  ") VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, 0)"),
                     approval.id, approval.owner, approval.tool, pqxx::binarystring(sealed),
                     approval.call_digest, approval.created_at_ms, approval.expires_at_ms);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::optional<Approval>> Get(const std::string& owner,
                                              const std::string& id) override {
    using Found = std::optional<Approval>;
    return pool_->TransactFor<Found>(
        [&](pqxx::work& tx) -> absl::StatusOr<Found> { return GetIn(tx, owner, id); });
  }

  absl::StatusOr<std::vector<Approval>> List(const std::string& owner, int limit) override {
    using Approvals = std::vector<Approval>;
    return pool_->TransactFor<Approvals>([&](pqxx::work& tx) -> absl::StatusOr<Approvals> {
      pqxx::result rows = tx.exec_params(absl::StrCat("SELECT ", kApprovalColumns,
                                                      " FROM aevatar_approvals WHERE owner = $1 "
                                                      "ORDER BY created_at_ms DESC, id LIMIT $2"),
                                         owner, limit);
      Approvals approvals;
      for (const auto& row : rows) {
        auto approval = ApprovalFromRow(*vault_, ReadApprovalRow(row));
        if (!approval.ok()) return approval.status();
        approvals.push_back(*std::move(approval));
      }
      return approvals;
    });
  }

  absl::StatusOr<Approval> Decide(const std::string& owner, const std::string& id, bool approve,
                                  int64_t now_ms) override {
    // A refusal is the result of a committed transaction (an expiry is
    // recorded), so it travels beside the transaction's status.
    absl::StatusOr<Approval> decided = absl::UnknownError("not decided");
    absl::Status status = pool_->Transact([&](pqxx::work& tx) -> absl::Status {
      // Only a pending, unexpired approval of this owner changes.
      const bool changed = tx.exec_params(
                                 "UPDATE aevatar_approvals SET state = $1, decided_at_ms = $2 "
                                 "WHERE id = $3 AND owner = $4 AND state = 'pending' "
                                 "AND expires_at_ms > $2",
                                 approve ? "approved" : "denied", now_ms, id, owner)
                               .affected_rows() == 1;
      auto current = GetIn(tx, owner, id);
      if (!current.ok()) return current.status();
      if (!current->has_value()) {
        decided = ApprovalNotFound();
        return absl::OkStatus();
      }
      if (changed) {
        decided = **std::move(current);
        return absl::OkStatus();
      }
      if ((*current)->state == ApprovalState::kPending) {
        // Past its expiry: record that, so it reads the same from now on.
        tx.exec_params(
            "UPDATE aevatar_approvals SET state = 'expired' WHERE id = $1 AND state = 'pending'",
            id);
      }
      decided = DecideRefusal(**current);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return decided;
  }

  absl::StatusOr<bool> Consume(const std::string& owner, const std::string& id) override {
    return pool_->TransactFor<bool>([&](pqxx::work& tx) -> absl::StatusOr<bool> {
      return tx.exec_params(
                   "UPDATE aevatar_approvals SET state = 'used' "
                   "WHERE id = $1 AND owner = $2 AND state = 'approved'",
                   id, owner)
                 .affected_rows() == 1;
    });
  }

  absl::StatusOr<int64_t> CountPending(const std::string& owner, int64_t now_ms) override {
    return pool_->TransactFor<int64_t>([&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
      return tx
          .exec_params(
              "SELECT count(*) FROM aevatar_approvals WHERE ($1 = '' OR owner = $1) "
              "AND state = 'pending' AND expires_at_ms > $2",
              owner, now_ms)[0][0]
          .as<int64_t>();
    });
  }

 private:
  absl::StatusOr<std::optional<Approval>> GetIn(pqxx::work& tx, const std::string& owner,
                                                const std::string& id) const {
    pqxx::result rows =
        tx.exec_params(absl::StrCat("SELECT ", kApprovalColumns,
                                    " FROM aevatar_approvals WHERE id = $1 AND owner = $2"),
                       id, owner);
    if (rows.empty()) return std::optional<Approval>();
    auto approval = ApprovalFromRow(*vault_, ReadApprovalRow(rows[0]));
    if (!approval.ok()) return approval.status();
    return std::optional<Approval>(*std::move(approval));
  }

  std::shared_ptr<PgPool> pool_;
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ApprovalStore>> OpenPostgresApprovalStore(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the approval store needs a vault key");
  if (pool == nullptr) return absl::InvalidArgumentError("the approval store needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.approvals", kApprovalMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresApprovalStore>(std::move(pool), std::move(vault));
}

}  // namespace aevatar::orchestrator
