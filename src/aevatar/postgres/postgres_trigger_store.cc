// TriggerStore on PostgreSQL: the twin of sqlite_trigger_store.cc for
// replicas sharing one database.
#include <utility>

#include "aevatar/postgres/postgres_stores.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
constexpr store::Migration kTriggerMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_workflow_triggers (
  trigger_id    TEXT   NOT NULL PRIMARY KEY,
  owner         TEXT   NOT NULL,
  workflow_id   TEXT   NOT NULL,
  kind          TEXT   NOT NULL CHECK (kind IN ('cron', 'webhook')),
  cron          TEXT   NOT NULL,
  hook_id       TEXT   UNIQUE,
  sealed_secret BYTEA,
  created_at_ms BIGINT NOT NULL,
  last_slot_ms  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX aevatar_workflow_triggers_by_workflow
  ON aevatar_workflow_triggers (owner, workflow_id);
CREATE TABLE aevatar_webhook_deliveries (
  hook_id          TEXT   NOT NULL,
  signature_digest TEXT   NOT NULL,
  received_at_ms   BIGINT NOT NULL,
  PRIMARY KEY (hook_id, signature_digest)
);
CREATE INDEX aevatar_webhook_deliveries_by_time ON aevatar_webhook_deliveries (received_at_ms);
)sql"},
    // Listings follow the order the workflow declares its triggers in.
    {2, R"sql(
ALTER TABLE aevatar_workflow_triggers ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
)sql"},
};

constexpr char kSelect[] =
    "SELECT trigger_id, owner, workflow_id, kind, cron, COALESCE(hook_id, ''), sealed_secret, "
    "created_at_ms, last_slot_ms FROM aevatar_workflow_triggers ";

class PostgresTriggerStore final : public TriggerStore {
 public:
  PostgresTriggerStore(std::shared_ptr<PgPool> pool, std::shared_ptr<const VaultKeyring> vault)
      : pool_(std::move(pool)), vault_(std::move(vault)) {}

  absl::Status ReplaceTriggers(const std::string& owner, const std::string& workflow_id,
                               const std::vector<TriggerRecord>& triggers) override {
    if (absl::Status st = OfWorkflow(owner, workflow_id, triggers); !st.ok()) return st;
    return pool_->Transact([&](pqxx::work& tx) {
      LockWorkflow(tx, owner, workflow_id);
      ReplaceIn(tx, owner, workflow_id, triggers);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<TriggerRecord>> ReconcileTriggers(const std::string& owner,
                                                               const std::string& workflow_id,
                                                               const TriggerPlan& plan) override {
    return pool_->TransactFor<std::vector<TriggerRecord>>(
        [&](pqxx::work& tx) -> absl::StatusOr<std::vector<TriggerRecord>> {
          LockWorkflow(tx, owner, workflow_id);
          auto stored = Rows(
              tx.exec_params(std::string(kSelect) + "WHERE owner = $1 AND workflow_id = $2 "
                                                    "ORDER BY ordinal, created_at_ms, trigger_id",
                             owner, workflow_id),
              /*open_secrets=*/true);
          if (!stored.ok()) return stored.status();
          std::vector<TriggerRecord> next = plan(*stored);
          if (absl::Status st = OfWorkflow(owner, workflow_id, next); !st.ok()) return st;
          ReplaceIn(tx, owner, workflow_id, next);
          return next;
        });
  }

  absl::StatusOr<std::vector<TriggerRecord>> TriggersOf(const std::string& owner,
                                                        const std::string& workflow_id) override {
    return Read(std::string(kSelect) +
                    "WHERE owner = $1 AND workflow_id = $2 ORDER BY ordinal, created_at_ms, "
                    "trigger_id",
                owner, workflow_id);
  }

  absl::StatusOr<std::vector<TriggerRecord>> Schedules() override {
    return pool_->TransactFor<std::vector<TriggerRecord>>(
        [&](pqxx::work& tx) -> absl::StatusOr<std::vector<TriggerRecord>> {
          return Rows(tx.exec(std::string(kSelect) + "WHERE kind = 'cron' ORDER BY trigger_id"),
                      /*open_secrets=*/false);
        });
  }

  absl::StatusOr<std::optional<TriggerRecord>> HookById(const std::string& hook_id) override {
    auto found = Read(std::string(kSelect) + "WHERE hook_id = $1 AND kind = $2", hook_id,
                      std::string("webhook"));
    if (!found.ok()) return found.status();
    if (found->empty()) return std::optional<TriggerRecord>();
    return std::optional<TriggerRecord>(std::move(found->front()));
  }

  absl::StatusOr<bool> ClaimSlot(const std::string& trigger_id, int64_t slot_ms) override {
    // A conditional UPDATE of the trigger's row: a replica updating at the
    // same time waits for the row lock, then re-checks the condition against
    // the committed value (READ COMMITTED) and changes nothing.
    return pool_->TransactFor<bool>([&](pqxx::work& tx) -> absl::StatusOr<bool> {
      pqxx::result r = tx.exec_params(
          "UPDATE aevatar_workflow_triggers SET last_slot_ms = $2 WHERE trigger_id = $1 AND "
          "kind = 'cron' AND last_slot_ms < $2",
          trigger_id, slot_ms);
      return r.affected_rows() == 1;
    });
  }

  absl::StatusOr<bool> ClaimDelivery(const std::string& hook_id,
                                     const std::string& signature_digest, int64_t now_ms,
                                     int64_t keep_ms) override {
    return pool_->TransactFor<bool>([&](pqxx::work& tx) -> absl::StatusOr<bool> {
      tx.exec_params("DELETE FROM aevatar_webhook_deliveries WHERE received_at_ms < $1",
                     now_ms - keep_ms);
      pqxx::result r = tx.exec_params(
          "INSERT INTO aevatar_webhook_deliveries (hook_id, signature_digest, received_at_ms) "
          "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
          hook_id, signature_digest, now_ms);
      return r.affected_rows() == 1;
    });
  }

  absl::Status ReleaseDelivery(const std::string& hook_id,
                               const std::string& signature_digest) override {
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(
          "DELETE FROM aevatar_webhook_deliveries WHERE hook_id = $1 AND signature_digest = $2",
          hook_id, signature_digest);
      return absl::OkStatus();
    });
  }

 private:
  static absl::Status OfWorkflow(const std::string& owner, const std::string& workflow_id,
                                 const std::vector<TriggerRecord>& triggers) {
    for (const TriggerRecord& t : triggers) {
      if (t.owner != owner || t.workflow_id != workflow_id) {
        return absl::InvalidArgumentError("a trigger of another workflow");
      }
    }
    return absl::OkStatus();
  }

  // Orders the writers of one workflow's triggers until `tx` ends: a
  // transaction-scoped advisory lock on the (owner, workflow) pair, which
  // also covers a workflow with no rows yet (a row lock could not).
  static void LockWorkflow(pqxx::work& tx, const std::string& owner,
                           const std::string& workflow_id) {
    tx.exec_params("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                   "aevatar.triggers\n" + owner + "\n" + workflow_id);
  }

  // ReplaceTriggers' writes, inside `tx`.
  void ReplaceIn(pqxx::work& tx, const std::string& owner, const std::string& workflow_id,
                 const std::vector<TriggerRecord>& triggers) {
    pqxx::result stored = tx.exec_params(
        "SELECT trigger_id FROM aevatar_workflow_triggers WHERE owner = $1 AND workflow_id = $2",
        owner, workflow_id);
    for (const pqxx::row& row : stored) {
      const std::string id = row[0].as<std::string>();
      bool kept = false;
      for (const TriggerRecord& t : triggers) kept = kept || t.trigger_id == id;
      if (!kept) tx.exec_params("DELETE FROM aevatar_workflow_triggers WHERE trigger_id = $1", id);
    }
    for (size_t ordinal = 0; ordinal < triggers.size(); ++ordinal) {
      const TriggerRecord& t = triggers[ordinal];
      const std::string sealed =
          t.kind == "webhook" ? SealHookSecret(*vault_, t.hook_id, t.secret) : "";
      tx.exec_params(
          "INSERT INTO aevatar_workflow_triggers (trigger_id, owner, workflow_id, kind, cron, "
          "hook_id, sealed_secret, created_at_ms, last_slot_ms, ordinal) VALUES ($1, $2, $3, $4, "
          "$5, NULLIF($6, ''), CASE WHEN $4 = 'webhook' THEN $7::bytea END, $8, $9, $10) "
          "ON CONFLICT (trigger_id) DO UPDATE SET ordinal = EXCLUDED.ordinal",
          t.trigger_id, owner, workflow_id, t.kind, t.cron, t.hook_id, pqxx::binarystring(sealed),
          t.created_at_ms, t.last_slot_ms, static_cast<int64_t>(ordinal));
    }
  }

  absl::StatusOr<std::vector<TriggerRecord>> Read(const std::string& sql, const std::string& a,
                                                  const std::string& b = "") {
    return pool_->TransactFor<std::vector<TriggerRecord>>(
        [&](pqxx::work& tx) -> absl::StatusOr<std::vector<TriggerRecord>> {
          pqxx::result rows = b.empty() && sql.find("$2") == std::string::npos
                                  ? tx.exec_params(sql, a)
                                  : tx.exec_params(sql, a, b);
          return Rows(rows, /*open_secrets=*/true);
        });
  }

  absl::StatusOr<std::vector<TriggerRecord>> Rows(const pqxx::result& rows, bool open_secrets) {
    std::vector<TriggerRecord> out;
    for (const pqxx::row& r : rows) {
      TriggerRecord t;
      t.trigger_id = r[0].as<std::string>();
      t.owner = r[1].as<std::string>();
      t.workflow_id = r[2].as<std::string>();
      t.kind = r[3].as<std::string>();
      t.cron = r[4].as<std::string>();
      t.hook_id = r[5].as<std::string>();
      if (open_secrets && t.kind == "webhook") {
        auto secret = OpenHookSecret(*vault_, t.hook_id, pqxx::binarystring(r[6]).str());
        if (!secret.ok()) return secret.status();
        t.secret = *std::move(secret);
      }
      t.created_at_ms = r[7].as<int64_t>();
      t.last_slot_ms = r[8].as<int64_t>();
      out.push_back(std::move(t));
    }
    return out;
  }

  std::shared_ptr<PgPool> pool_;
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<TriggerStore>> OpenPostgresTriggerStore(
    std::shared_ptr<store::PgPool> pool, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the trigger store needs a vault key");
  if (pool == nullptr) return absl::InvalidArgumentError("the trigger store needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.triggers", kTriggerMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresTriggerStore>(std::move(pool), std::move(vault));
}

}  // namespace aevatar::orchestrator
