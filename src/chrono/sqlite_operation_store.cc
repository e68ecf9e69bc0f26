#include "chrono/sqlite_operation_store.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "chrono/operation_transitions.h"
#include "store/group_commit.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::chrono {
namespace {

using store::Database;
using store::Statement;
using store::Transaction;

// Released migrations are never edited; append new ones.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE operations (
  id                   TEXT    NOT NULL PRIMARY KEY,
  owner                TEXT    NOT NULL,
  idempotency_key_hash TEXT    NOT NULL,
  fingerprint          TEXT    NOT NULL,
  request              TEXT    NOT NULL,
  sealed_credentials   BLOB    NOT NULL,
  status               TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded',
                                              'failed', 'cancelled', 'outcome_uncertain')),
  created_at_ms        INTEGER NOT NULL,
  started_at_ms        INTEGER NOT NULL,
  finished_at_ms       INTEGER NOT NULL,
  expires_at_ms        INTEGER NOT NULL,
  version              INTEGER NOT NULL,
  cancel_requested     INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
  result               TEXT    NOT NULL,
  claimed_by           TEXT    NOT NULL,
  expired              INTEGER NOT NULL CHECK (expired IN (0, 1))
) STRICT;
-- Idempotency: one operation per (owner, key); CreateOrGet's upsert targets it.
CREATE UNIQUE INDEX operations_owner_key ON operations (owner, idempotency_key_hash);
-- ClaimNext: oldest queued first.
CREATE INDEX operations_queue ON operations (status, created_at_ms, id);
-- ExpireOld.
CREATE INDEX operations_expiry ON operations (expired, expires_at_ms);
)sql"},
    // Leases on running operations. Rows running before it have lease 0:
    // their runner never renews, so the first sweep settles them.
    {2, R"sql(
ALTER TABLE operations ADD COLUMN lease_expires_at_ms INTEGER NOT NULL DEFAULT 0;
)sql"},
    // ListOwned pages an owner's operations newest first without sorting them all.
    {3, R"sql(
CREATE INDEX operations_by_owner ON operations (owner, created_at_ms, id);
)sql"},
};

// Every SELECT reads, and the insert binds, the columns in this order.
constexpr const char* kColumns = kOperationColumns;

const std::string& InsertSql() {
  static const std::string* const sql = new std::string(absl::StrCat(
      "INSERT INTO operations (", kColumns,
      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) ",
      "ON CONFLICT (owner, idempotency_key_hash) DO NOTHING"));
  return *sql;
}

// Writes the fields a transition may change. Uses the BindRow numbering; the
// parameters it leaves out (?2-?4, ?8, ?11) are bound but unused.
constexpr char kUpdate[] =
    "UPDATE operations SET request = ?5, sealed_credentials = ?6, status = ?7, "
    "started_at_ms = ?9, finished_at_ms = ?10, version = ?12, cancel_requested = ?13, "
    "result = ?14, claimed_by = ?15, expired = ?16, lease_expires_at_ms = ?17 WHERE id = ?1";

// Enters outcome_uncertain as EnterTerminal does (?1: the status name, ?2: now).
constexpr char kSetUncertain[] =
    "UPDATE operations SET status = ?1, finished_at_ms = ?2, version = version + 1, "
    "request = '', sealed_credentials = X'', lease_expires_at_ms = 0 ";

std::string_view Name(OperationStatus status) { return OperationStatusName(status); }

// The parameters ?1..?17 in kColumns order.
absl::Status BindRow(Statement& stmt, const Operation& op) {
  return stmt.BindAll({op.id, op.owner, op.idempotency_key_hash, op.fingerprint, op.request,
                       store::Blob(op.sealed_credentials), Name(op.status), op.created_at_ms,
                       op.started_at_ms, op.finished_at_ms, op.expires_at_ms, op.version,
                       int64_t{op.cancel_requested}, op.result, op.claimed_by, int64_t{op.expired},
                       op.lease_expires_at_ms});
}

absl::StatusOr<Operation> ReadRow(const Statement& stmt) {
  Operation op;
  op.id = stmt.ColumnText(0);
  op.owner = stmt.ColumnText(1);
  op.idempotency_key_hash = stmt.ColumnText(2);
  op.fingerprint = stmt.ColumnText(3);
  op.request = stmt.ColumnText(4);
  op.sealed_credentials = stmt.ColumnBlob(5);
  std::optional<OperationStatus> status = ParseOperationStatus(stmt.ColumnText(6));
  if (!status) return absl::InternalError("stored operation has an unknown status");
  op.status = *status;
  op.created_at_ms = stmt.ColumnInt64(7);
  op.started_at_ms = stmt.ColumnInt64(8);
  op.finished_at_ms = stmt.ColumnInt64(9);
  op.expires_at_ms = stmt.ColumnInt64(10);
  op.version = stmt.ColumnInt64(11);
  op.cancel_requested = stmt.ColumnInt64(12) != 0;
  op.result = stmt.ColumnText(13);
  op.claimed_by = stmt.ColumnText(14);
  op.expired = stmt.ColumnInt64(15) != 0;
  op.lease_expires_at_ms = stmt.ColumnInt64(16);
  return op;
}

// Runs "SELECT <kColumns> FROM operations <tail>" and returns the first row,
// if any.
absl::StatusOr<std::optional<Operation>> QueryOne(Database& db, const std::string& tail,
                                                  std::initializer_list<store::Value> params) {
  absl::StatusOr<Statement> stmt =
      db.Prepare(absl::StrCat("SELECT ", kColumns, " FROM operations ", tail), params);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::nullopt;
  absl::StatusOr<Operation> op = ReadRow(*stmt);
  if (!op.ok()) return op.status();
  return std::move(*op);
}

// Finish's change to the operation (a Transition).
std::function<absl::StatusOr<bool>(Operation&)> FinishChange(OperationStatus status,
                                                             const std::string& result,
                                                             int64_t now_ms) {
  return [status, &result, now_ms](Operation& op) -> absl::StatusOr<bool> {
    if (absl::Status s = ApplyFinish(op, status, result, now_ms); !s.ok()) return s;
    return true;
  };
}

absl::StatusOr<Operation> LoadById(Database& db, const std::string& id) {
  absl::StatusOr<std::optional<Operation>> op = QueryOne(db, "WHERE id = ?1", {id});
  if (!op.ok()) return op.status();
  if (!*op) return absl::NotFoundError(absl::StrCat("operation ", id, " not found"));
  return std::move(**op);
}

absl::Status Save(Database& db, const Operation& op) {
  absl::StatusOr<Statement> stmt = db.Prepare(kUpdate);
  if (!stmt.ok()) return stmt.status();
  if (absl::Status s = BindRow(*stmt, op); !s.ok()) return s;
  return stmt->Run();
}

// One connection behind one mutex, not a connection per thread: SQLite admits
// one writer at a time anyway and almost every method writes, so more
// connections would only trade waiting on mu_ for SQLITE_BUSY retries. Reads
// wait behind writes, which is cheap at this service's rates. Other processes
// on the same file are kept exclusive by BEGIN IMMEDIATE and busy_timeout.
//
// The writes of every operation's life (create, claim, finish, cancel) go
// through a GroupCommit: those that HTTP threads and workers make at the
// same time share one transaction and one WAL sync, and each caller is
// answered only once that transaction is durable.
class SqliteOperationStore final : public OperationStore {
 public:
  explicit SqliteOperationStore(Database db) : db_(std::move(db)) {}

  absl::StatusOr<CreateOutcome> CreateOrGet(const Operation& op) override {
    if (absl::Status s = ValidateFresh(op); !s.ok()) return s;
    return ToStoreError(group_.RunForValue<CreateOutcome>(
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return CreateOrGetLocked(op); }));
  }

  absl::StatusOr<Operation> Get(const std::string& id) override {
    absl::MutexLock lock(&mu_);
    return ToStoreError(LoadById(db_, id));
  }

  absl::StatusOr<std::optional<Operation>> ClaimNext(const std::string& runner_id, int64_t now_ms,
                                                     int64_t lease_ms) override {
    if (absl::Status s = ValidateLease(runner_id, lease_ms); !s.ok()) return s;
    return ToStoreError(
        group_.RunForValue<std::optional<Operation>>([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return ClaimNextLocked(runner_id, now_ms, lease_ms);
        }));
  }

  absl::StatusOr<Operation> Finish(const std::string& id, OperationStatus status,
                                   const std::string& result, int64_t now_ms) override {
    if (absl::Status s = ValidateFinishStatus(status); !s.ok()) return s;
    return ToStoreError(Transition(id, FinishChange(status, result, now_ms)));
  }

  // One grouped write: the claim commits with the finish (one WAL sync on
  // the worker's way from one run to the next). A failed claim undoes the
  // finish too; the executor then finishes alone.
  absl::StatusOr<std::optional<Operation>> FinishAndClaimNext(
      const std::string& id, OperationStatus status, const std::string& result,
      const std::string& runner_id, int64_t now_ms, int64_t lease_ms) override {
    if (absl::Status s = ValidateFinishStatus(status); !s.ok()) return s;
    if (absl::Status s = ValidateLease(runner_id, lease_ms); !s.ok()) return s;
    return ToStoreError(group_.RunForValue<std::optional<Operation>>(
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<std::optional<Operation>> {
          absl::StatusOr<Operation> finished =
              ChangeLocked(id, FinishChange(status, result, now_ms));
          if (!finished.ok()) return finished.status();
          return ClaimNextLocked(runner_id, now_ms, lease_ms);
        }));
  }

  absl::StatusOr<Operation> RequestCancel(const std::string& id, int64_t now_ms) override {
    return ToStoreError(Transition(
        id, [&](Operation& op) -> absl::StatusOr<bool> { return ApplyCancel(op, now_ms); }));
  }

  absl::StatusOr<int> MarkRunningUncertain(const std::string& runner_id, int64_t now_ms) override {
    if (runner_id.empty()) {
      return absl::InvalidArgumentError("MarkRunningUncertain needs a runner id");
    }
    absl::MutexLock lock(&mu_);
    absl::StatusOr<int64_t> marked =
        db_.Run(absl::StrCat(kSetUncertain, "WHERE status = ?3 AND claimed_by = ?4"),
                {Name(OperationStatus::kOutcomeUncertain), now_ms, Name(OperationStatus::kRunning),
                 runner_id});
    if (!marked.ok()) return ToStoreError(marked.status());
    return static_cast<int>(*marked);
  }

  absl::StatusOr<std::vector<LeaseRenewal>> RenewLeases(const std::string& runner_id,
                                                        const std::vector<std::string>& ids,
                                                        int64_t now_ms, int64_t lease_ms) override {
    if (absl::Status s = ValidateLease(runner_id, lease_ms); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    return ToStoreError(RenewLeasesLocked(runner_id, ids, LeaseEnd(now_ms, lease_ms)));
  }

  absl::StatusOr<int> SettleExpiredLeases(int64_t now_ms) override {
    absl::MutexLock lock(&mu_);
    // One statement: atomic against other processes' renewals and settlements.
    absl::StatusOr<int64_t> settled = db_.Run(
        absl::StrCat(kSetUncertain, "WHERE status = ?3 AND lease_expires_at_ms <= ?2"),
        {Name(OperationStatus::kOutcomeUncertain), now_ms, Name(OperationStatus::kRunning)});
    if (!settled.ok()) return ToStoreError(settled.status());
    return static_cast<int>(*settled);
  }

  absl::StatusOr<int> ExpireOld(int64_t now_ms, int64_t tombstone_keep_ms) override {
    if (tombstone_keep_ms < 0) return absl::InvalidArgumentError("tombstone_keep_ms < 0");
    absl::MutexLock lock(&mu_);
    return ToStoreError(ExpireOldLocked(now_ms, tombstone_keep_ms));
  }

  absl::StatusOr<int64_t> CountWithStatus(OperationStatus status) override {
    absl::MutexLock lock(&mu_);
    return ToStoreError(
        db_.QueryInt64("SELECT COUNT(*) FROM operations WHERE status = ?1", {Name(status)}));
  }

  absl::StatusOr<int64_t> CountQueuedAhead(const Operation& op, int64_t at_most) override {
    absl::MutexLock lock(&mu_);
    return ToStoreError(db_.QueryInt64(
        // A row-value range: a search of operations_queue, never a scan.
        "SELECT COUNT(*) FROM (SELECT 1 FROM operations WHERE status = ?1 AND "
        "(created_at_ms, id) < (?2, ?3) LIMIT ?4)",
        {Name(OperationStatus::kQueued), op.created_at_ms, op.id, std::max<int64_t>(at_most, 0)}));
  }

  absl::StatusOr<std::vector<Operation>> ListOwned(const OperationListQuery& q) override {
    const base::PagePosition after = q.after.value_or(base::PagePosition{});
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Statement> stmt = db_.Prepare(
        absl::StrCat("SELECT ", kColumns,
                     " FROM operations WHERE owner = ?1 AND (?2 = '' OR status = ?2) AND "
                     "expired = 0 AND (status IN ('queued', 'running') OR expires_at_ms > ?3) AND "
                     "(?4 = 0 OR created_at_ms < ?5 OR (created_at_ms = ?5 AND id < ?6)) "
                     "ORDER BY created_at_ms DESC, id DESC LIMIT ?7"),
        {q.owner, q.status ? Name(*q.status) : std::string_view(), q.now_ms,
         int64_t{q.after.has_value()}, after.created_at_ms, after.id,
         static_cast<int64_t>(q.limit)});
    if (!stmt.ok()) return ToStoreError(stmt.status());
    std::vector<Operation> ops;
    for (;;) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return ToStoreError(row.status());
      if (!*row) return ops;
      absl::StatusOr<Operation> op = ReadRow(*stmt);
      if (!op.ok()) return op.status();
      ops.push_back(std::move(*op));
    }
  }

  absl::Status Ping() override {
    absl::MutexLock lock(&mu_);
    // Reads the table, so a vanished or unreadable file fails the probe.
    return ToStoreError(
        db_.QueryInt64("SELECT COUNT(*) FROM operations WHERE id = ''", {}).status());
  }

 private:
  absl::StatusOr<CreateOutcome> CreateOrGetLocked(const Operation& op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    // Insert-if-absent and the read-back share one write transaction (the
    // group's), so concurrent callers (threads or processes) see exactly one
    // creation.
    absl::StatusOr<Statement> insert = db_.Prepare(InsertSql());
    if (!insert.ok()) return insert.status();
    if (absl::Status s = BindRow(*insert, op); !s.ok()) return s;
    if (absl::Status s = insert->Run(); !s.ok()) {
      // Only the id can still conflict: never hand back another owner's row.
      if (absl::IsAlreadyExists(s)) return absl::InternalError("operation id collision");
      return s;
    }
    const bool created = db_.Changes() == 1;
    absl::StatusOr<std::optional<Operation>> stored = QueryOne(
        db_, "WHERE owner = ?1 AND idempotency_key_hash = ?2", {op.owner, op.idempotency_key_hash});
    if (!stored.ok()) return stored.status();
    if (!*stored) return absl::InternalError("inserted operation not found");
    return CreateOutcome{std::move(**stored), created};
  }

  absl::StatusOr<std::optional<Operation>> ClaimNextLocked(const std::string& runner_id,
                                                           int64_t now_ms, int64_t lease_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<std::optional<Operation>> next =
        QueryOne(db_, "WHERE status = ?1 ORDER BY created_at_ms, id LIMIT 1",
                 {Name(OperationStatus::kQueued)});
    if (!next.ok() || !*next) return next;
    ApplyClaim(**next, runner_id, now_ms, lease_ms);
    if (absl::Status s = Save(db_, **next); !s.ok()) return s;
    return next;
  }

  absl::StatusOr<std::vector<LeaseRenewal>> RenewLeasesLocked(const std::string& runner_id,
                                                              const std::vector<std::string>& ids,
                                                              int64_t lease_end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<Transaction> tx = Transaction::Begin(db_);
    if (!tx.ok()) return tx.status();
    std::vector<LeaseRenewal> renewed;
    for (const std::string& id : ids) {
      absl::StatusOr<std::optional<Operation>> op =
          QueryOne(db_, "WHERE id = ?1 AND status = ?2 AND claimed_by = ?3",
                   {id, Name(OperationStatus::kRunning), runner_id});
      if (!op.ok()) return op.status();
      if (!*op) continue;  // no longer this runner's
      absl::StatusOr<int64_t> updated =
          db_.Run("UPDATE operations SET lease_expires_at_ms = ?1 WHERE id = ?2", {lease_end, id});
      if (!updated.ok()) return updated.status();
      renewed.push_back({id, (*op)->cancel_requested});
    }
    if (absl::Status s = tx->Commit(); !s.ok()) return s;
    return renewed;
  }

  // Loads `id`, applies `change` (which returns whether it modified the
  // operation, or an error) and stores the result, all in one grouped write.
  absl::StatusOr<Operation> Transition(
      const std::string& id, const std::function<absl::StatusOr<bool>(Operation&)>& change) {
    return group_.RunForValue<Operation>(
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ChangeLocked(id, change); });
  }

  // Transition's write, inside a grouped write the caller runs.
  absl::StatusOr<Operation> ChangeLocked(
      const std::string& id, const std::function<absl::StatusOr<bool>(Operation&)>& change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<Operation> op = LoadById(db_, id);
    if (!op.ok()) return op.status();
    absl::StatusOr<bool> changed = change(*op);
    if (!changed.ok()) return changed.status();
    if (*changed) {
      if (absl::Status s = Save(db_, *op); !s.ok()) return s;
    }
    return op;
  }

  absl::StatusOr<int> ExpireOldLocked(int64_t now_ms, int64_t keep_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<Transaction> tx = Transaction::Begin(db_);
    if (!tx.ok()) return tx.status();
    // Deleted first, so a tombstone made below lives until a later call even
    // when keep_ms is 0. The cutoff saturates instead of overflowing.
    absl::StatusOr<int64_t> deleted =
        db_.Run("DELETE FROM operations WHERE expired = 1 AND expires_at_ms <= ?1",
                {TombstoneCutoff(now_ms, keep_ms)});
    if (!deleted.ok()) return deleted.status();
    absl::StatusOr<int64_t> expired = db_.Run(
        "UPDATE operations SET expired = 1, request = '', result = '', sealed_credentials = X'' "
        "WHERE expired = 0 AND status NOT IN (?1, ?2) AND expires_at_ms <= ?3",
        {Name(OperationStatus::kQueued), Name(OperationStatus::kRunning), now_ms});
    if (!expired.ok()) return expired.status();
    if (absl::Status s = tx->Commit(); !s.ok()) return s;
    return static_cast<int>(*expired);
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  store::GroupCommit group_{&db_, &mu_};
};

}  // namespace

absl::StatusOr<std::unique_ptr<OperationStore>> OpenSqliteOperationStore(const std::string& path) {
  absl::StatusOr<Database> db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status s = store::ApplyMigrations(*db, kMigrations); !s.ok()) return s;
  return std::make_unique<SqliteOperationStore>(std::move(*db));
}

}  // namespace aevatar::chrono
