// TriggerStore on one SQLite file (triggers.db in the state directory).
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/triggers/trigger_store.h"
#include "aevatar/vault/sealed_json.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;

// Released migrations are never edited; append new ones.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE workflow_triggers (
  trigger_id    TEXT    NOT NULL PRIMARY KEY,
  owner         TEXT    NOT NULL,
  workflow_id   TEXT    NOT NULL,
  kind          TEXT    NOT NULL CHECK (kind IN ('cron', 'webhook')),
  cron          TEXT    NOT NULL,
  hook_id       TEXT    UNIQUE,
  sealed_secret BLOB,
  created_at_ms INTEGER NOT NULL,
  last_slot_ms  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX workflow_triggers_by_workflow ON workflow_triggers (owner, workflow_id);
CREATE TABLE webhook_deliveries (
  hook_id          TEXT    NOT NULL,
  signature_digest TEXT    NOT NULL,
  received_at_ms   INTEGER NOT NULL,
  PRIMARY KEY (hook_id, signature_digest)
) STRICT;
CREATE INDEX webhook_deliveries_by_time ON webhook_deliveries (received_at_ms);
)sql"},
    // Listings follow the order the workflow declares its triggers in.
    {2, R"sql(
ALTER TABLE workflow_triggers ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
)sql"},
};

constexpr char kColumns[] =
    "SELECT trigger_id, owner, workflow_id, kind, cron, hook_id, sealed_secret, created_at_ms, "
    "last_slot_ms FROM workflow_triggers ";

// One connection behind one mutex; processes sharing the file are
// serialised by SQLite's write lock (BEGIN IMMEDIATE).
class SqliteTriggerStore final : public TriggerStore {
 public:
  SqliteTriggerStore(Database db, std::shared_ptr<const VaultKeyring> vault)
      : db_(std::move(db)), vault_(std::move(vault)) {}

  absl::Status ReplaceTriggers(const std::string& owner, const std::string& workflow_id,
                               const std::vector<TriggerRecord>& triggers) override {
    absl::MutexLock lock(&mu_);
    auto tx = store::Transaction::Begin(db_);
    if (!tx.ok()) return tx.status();
    if (absl::Status st = ReplaceLocked(owner, workflow_id, triggers); !st.ok()) return st;
    return tx->Commit();
  }

  absl::StatusOr<std::vector<TriggerRecord>> ReconcileTriggers(const std::string& owner,
                                                               const std::string& workflow_id,
                                                               const TriggerPlan& plan) override {
    // The mutex orders this process's reconciles; BEGIN IMMEDIATE takes
    // SQLite's write lock before the read, ordering other processes'.
    absl::MutexLock lock(&mu_);
    auto tx = store::Transaction::Begin(db_);
    if (!tx.ok()) return tx.status();
    auto stored = ReadLocked(std::string(kColumns) +
                                 "WHERE owner = ?1 AND workflow_id = ?2 ORDER BY ordinal, "
                                 "created_at_ms, trigger_id",
                             {owner, workflow_id}, /*open_secrets=*/true);
    if (!stored.ok()) return stored.status();
    std::vector<TriggerRecord> next = plan(*stored);
    if (absl::Status st = ReplaceLocked(owner, workflow_id, next); !st.ok()) return st;
    if (absl::Status st = tx->Commit(); !st.ok()) return st;
    return next;
  }

  absl::StatusOr<std::vector<TriggerRecord>> TriggersOf(const std::string& owner,
                                                        const std::string& workflow_id) override {
    absl::MutexLock lock(&mu_);
    return ReadLocked(std::string(kColumns) +
                          "WHERE owner = ?1 AND workflow_id = ?2 ORDER BY ordinal, "
                          "created_at_ms, trigger_id",
                      {owner, workflow_id}, /*open_secrets=*/true);
  }

  absl::StatusOr<std::vector<TriggerRecord>> Schedules() override {
    absl::MutexLock lock(&mu_);
    return ReadLocked(std::string(kColumns) + "WHERE kind = 'cron' ORDER BY trigger_id", {},
                      /*open_secrets=*/false);
  }

  absl::StatusOr<std::optional<TriggerRecord>> HookById(const std::string& hook_id) override {
    absl::MutexLock lock(&mu_);
    auto found = ReadLocked(std::string(kColumns) + "WHERE hook_id = ?1 AND kind = 'webhook'",
                            {hook_id}, /*open_secrets=*/true);
    if (!found.ok()) return found.status();
    if (found->empty()) return std::optional<TriggerRecord>();
    return std::optional<TriggerRecord>(std::move(found->front()));
  }

  absl::StatusOr<bool> ClaimSlot(const std::string& trigger_id, int64_t slot_ms) override {
    absl::MutexLock lock(&mu_);
    // One conditional UPDATE: SQLite's write lock makes it atomic across
    // the processes sharing the file.
    auto changed = db_.Run(
        "UPDATE workflow_triggers SET last_slot_ms = ?2 WHERE trigger_id = ?1 AND kind = 'cron' "
        "AND last_slot_ms < ?2",
        {trigger_id, slot_ms});
    if (!changed.ok()) return changed.status();
    return *changed == 1;
  }

  absl::StatusOr<bool> ClaimDelivery(const std::string& hook_id,
                                     const std::string& signature_digest, int64_t now_ms,
                                     int64_t keep_ms) override {
    absl::MutexLock lock(&mu_);
    auto tx = store::Transaction::Begin(db_);
    if (!tx.ok()) return tx.status();
    auto pruned =
        db_.Run("DELETE FROM webhook_deliveries WHERE received_at_ms < ?1", {now_ms - keep_ms});
    if (!pruned.ok()) return pruned.status();
    auto inserted = db_.Run(
        "INSERT INTO webhook_deliveries (hook_id, signature_digest, received_at_ms) "
        "VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        {hook_id, signature_digest, now_ms});
    if (!inserted.ok()) return inserted.status();
    if (absl::Status st = tx->Commit(); !st.ok()) return st;
    return *inserted == 1;
  }

  absl::Status ReleaseDelivery(const std::string& hook_id,
                               const std::string& signature_digest) override {
    absl::MutexLock lock(&mu_);
    auto removed =
        db_.Run("DELETE FROM webhook_deliveries WHERE hook_id = ?1 AND signature_digest = ?2",
                {hook_id, signature_digest});
    return removed.status();
  }

 private:
  // ReplaceTriggers' writes, inside the caller's transaction.
  absl::Status ReplaceLocked(const std::string& owner, const std::string& workflow_id,
                             const std::vector<TriggerRecord>& triggers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto existing = ReadLocked(std::string(kColumns) + "WHERE owner = ?1 AND workflow_id = ?2",
                               {owner, workflow_id}, /*open_secrets=*/false);
    if (!existing.ok()) return existing.status();
    for (const TriggerRecord& old : *existing) {
      bool kept = false;
      for (const TriggerRecord& t : triggers) kept = kept || t.trigger_id == old.trigger_id;
      if (kept) continue;
      auto removed =
          db_.Run("DELETE FROM workflow_triggers WHERE trigger_id = ?1", {old.trigger_id});
      if (!removed.ok()) return removed.status();
    }
    for (size_t ordinal = 0; ordinal < triggers.size(); ++ordinal) {
      const TriggerRecord& t = triggers[ordinal];
      if (t.owner != owner || t.workflow_id != workflow_id) {
        return absl::InvalidArgumentError("a trigger of another workflow");
      }
      const std::string sealed =
          t.kind == "webhook" ? SealHookSecret(*vault_, t.hook_id, t.secret) : "";
      auto stmt = db_.Prepare(
          "INSERT INTO workflow_triggers (trigger_id, owner, workflow_id, kind, cron, hook_id, "
          "sealed_secret, created_at_ms, last_slot_ms, ordinal) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
          "ON CONFLICT (trigger_id) DO UPDATE SET ordinal = excluded.ordinal",
          {t.trigger_id, owner, workflow_id, t.kind, t.cron, t.hook_id, store::Blob(sealed),
           t.created_at_ms, t.last_slot_ms, static_cast<int64_t>(ordinal)});
      if (!stmt.ok()) return stmt.status();
      if (t.kind != "webhook") {
        (void)stmt->BindNull(6);
        (void)stmt->BindNull(7);
      }
      if (absl::Status st = stmt->Run(); !st.ok()) {
        if (absl::IsAlreadyExists(st) || absl::IsFailedPrecondition(st)) {
          return absl::AlreadyExistsError("the hook id is taken");
        }
        return st;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<TriggerRecord>> ReadLocked(const std::string& sql,
                                                        std::initializer_list<store::Value> values,
                                                        bool open_secrets)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto stmt = db_.Prepare(sql, values);
    if (!stmt.ok()) return stmt.status();
    std::vector<TriggerRecord> out;
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      TriggerRecord t;
      t.trigger_id = stmt->ColumnText(0);
      t.owner = stmt->ColumnText(1);
      t.workflow_id = stmt->ColumnText(2);
      t.kind = stmt->ColumnText(3);
      t.cron = stmt->ColumnText(4);
      t.hook_id = stmt->ColumnText(5);
      if (open_secrets && t.kind == "webhook") {
        auto secret = OpenHookSecret(*vault_, t.hook_id, stmt->ColumnBlob(6));
        if (!secret.ok()) return secret.status();
        t.secret = *std::move(secret);
      }
      t.created_at_ms = stmt->ColumnInt64(7);
      t.last_slot_ms = stmt->ColumnInt64(8);
      out.push_back(std::move(t));
    }
    return out;
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<const VaultKeyring> vault_;
};

}  // namespace

std::string SealHookSecret(const VaultKeyring& vault, const std::string& hook_id,
                           const std::string& secret) {
  return SealJson(vault, {{"hook_id", hook_id}, {"secret", secret}});
}

absl::StatusOr<std::string> OpenHookSecret(const VaultKeyring& vault, const std::string& hook_id,
                                           std::string_view sealed) {
  auto opened = OpenSealedJson(vault, sealed, "webhook secret", {{"hook_id", hook_id}});
  if (!opened.ok()) return opened.status();
  auto secret = opened->find("secret");
  if (secret == opened->end() || !secret->is_string()) {
    return absl::DataLossError("the sealed webhook secret has no secret");
  }
  return secret->get<std::string>();
}

absl::StatusOr<std::unique_ptr<TriggerStore>> OpenSqliteTriggerStore(
    const std::string& path, std::shared_ptr<const VaultKeyring> vault) {
  if (vault == nullptr) return absl::InvalidArgumentError("the trigger store needs a vault key");
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status st = store::ApplyMigrations(*db, kMigrations); !st.ok()) return st;
  return std::unique_ptr<TriggerStore>(new SqliteTriggerStore(*std::move(db), std::move(vault)));
}

}  // namespace aevatar::orchestrator
