#include "chrono/postgres_operation_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "chrono/operation_transitions.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::chrono {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE chrono_operations (
  id                   TEXT    NOT NULL PRIMARY KEY,
  owner                TEXT    NOT NULL,
  idempotency_key_hash TEXT    NOT NULL,
  fingerprint          TEXT    NOT NULL,
  request              TEXT    NOT NULL,
  sealed_credentials   BYTEA   NOT NULL,
  status               TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded',
                                              'failed', 'cancelled', 'outcome_uncertain')),
  created_at_ms        BIGINT  NOT NULL,
  started_at_ms        BIGINT  NOT NULL,
  finished_at_ms       BIGINT  NOT NULL,
  expires_at_ms        BIGINT  NOT NULL,
  version              BIGINT  NOT NULL,
  cancel_requested     BOOLEAN NOT NULL,
  result               TEXT    NOT NULL,
  claimed_by           TEXT    NOT NULL,
  expired              BOOLEAN NOT NULL,
  -- Idempotency: one operation per (owner, key); CreateOrGet's upsert targets it.
  CONSTRAINT chrono_operations_owner_key UNIQUE (owner, idempotency_key_hash)
);
-- ClaimNext: oldest queued first.
CREATE INDEX chrono_operations_queue ON chrono_operations (created_at_ms, id)
  WHERE status = 'queued';
-- MarkRunningUncertain.
CREATE INDEX chrono_operations_running ON chrono_operations (claimed_by)
  WHERE status = 'running';
-- ExpireOld.
CREATE INDEX chrono_operations_expiry ON chrono_operations (expired, expires_at_ms);
)sql"},
    // Leases on running operations. Rows running before it have lease 0:
    // their runner never renews, so the first sweep settles them.
    {2, R"sql(
ALTER TABLE chrono_operations ADD COLUMN lease_expires_at_ms BIGINT NOT NULL DEFAULT 0;
-- SettleExpiredLeases.
CREATE INDEX chrono_operations_leases ON chrono_operations (lease_expires_at_ms)
  WHERE status = 'running';
)sql"},
    // ListOwned pages an owner's operations newest first without sorting them all.
    {3, R"sql(
CREATE INDEX chrono_operations_by_owner ON chrono_operations (owner, created_at_ms, id);
)sql"},
};

// Every SELECT reads, and the insert binds, the columns in this order.
constexpr const char* kColumns = kOperationColumns;

const std::string& InsertSql() {
  static const std::string* const sql = new std::string(absl::StrCat(
      "INSERT INTO chrono_operations (", kColumns,
      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ",
      "ON CONFLICT (owner, idempotency_key_hash) DO NOTHING RETURNING id"));
  return *sql;
}

// The fields a transition may change.
constexpr char kUpdate[] =
    "UPDATE chrono_operations SET request = $2, sealed_credentials = $3, status = $4, "
    "started_at_ms = $5, finished_at_ms = $6, version = $7, cancel_requested = $8, "
    "result = $9, claimed_by = $10, expired = $11, lease_expires_at_ms = $12 WHERE id = $1";

// Enters outcome_uncertain as EnterTerminal does ($1: the status name, $2: now).
constexpr char kSetUncertain[] =
    "UPDATE chrono_operations SET status = $1, finished_at_ms = $2, version = version + 1, "
    "request = '', sealed_credentials = ''::bytea, lease_expires_at_ms = 0 ";

std::string Name(OperationStatus status) { return std::string(OperationStatusName(status)); }

absl::StatusOr<Operation> ReadRow(const pqxx::row& row) {
  Operation op;
  op.id = row[0].as<std::string>();
  op.owner = row[1].as<std::string>();
  op.idempotency_key_hash = row[2].as<std::string>();
  op.fingerprint = row[3].as<std::string>();
  op.request = row[4].as<std::string>();
  op.sealed_credentials = pqxx::binarystring(row[5]).str();
  std::optional<OperationStatus> status = ParseOperationStatus(row[6].as<std::string>());
  if (!status) return absl::InternalError("stored operation has an unknown status");
  op.status = *status;
  op.created_at_ms = row[7].as<int64_t>();
  op.started_at_ms = row[8].as<int64_t>();
  op.finished_at_ms = row[9].as<int64_t>();
  op.expires_at_ms = row[10].as<int64_t>();
  op.version = row[11].as<int64_t>();
  op.cancel_requested = row[12].as<bool>();
  op.result = row[13].as<std::string>();
  op.claimed_by = row[14].as<std::string>();
  op.expired = row[15].as<bool>();
  op.lease_expires_at_ms = row[16].as<int64_t>();
  return op;
}

// Runs "SELECT <kColumns> FROM chrono_operations <tail>" and returns the
// first row, if any.
template <typename... Args>
absl::StatusOr<std::optional<Operation>> QueryOne(pqxx::work& tx, const std::string& tail,
                                                  Args&&... args) {
  pqxx::result rows =
      tx.exec_params(absl::StrCat("SELECT ", kColumns, " FROM chrono_operations ", tail),
                     std::forward<Args>(args)...);
  if (rows.empty()) return std::nullopt;
  absl::StatusOr<Operation> op = ReadRow(rows[0]);
  if (!op.ok()) return op.status();
  return std::move(*op);
}

// Loads `id` locked for this transaction.
absl::StatusOr<Operation> LoadForUpdate(pqxx::work& tx, const std::string& id) {
  absl::StatusOr<std::optional<Operation>> op = QueryOne(tx, "WHERE id = $1 FOR UPDATE", id);
  if (!op.ok()) return op.status();
  if (!*op) return absl::NotFoundError(absl::StrCat("operation ", id, " not found"));
  return std::move(**op);
}

void Save(pqxx::work& tx, const Operation& op) {
  tx.exec_params(kUpdate, op.id, op.request, pqxx::binarystring(op.sealed_credentials),
                 Name(op.status), op.started_at_ms, op.finished_at_ms, op.version,
                 op.cancel_requested, op.result, op.claimed_by, op.expired, op.lease_expires_at_ms);
}

class PostgresOperationStore final : public OperationStore {
 public:
  explicit PostgresOperationStore(std::unique_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  absl::StatusOr<CreateOutcome> CreateOrGet(const Operation& op) override {
    if (absl::Status s = ValidateFresh(op); !s.ok()) return s;
    absl::StatusOr<CreateOutcome> outcome = pool_->TransactFor<CreateOutcome>(
        [&](pqxx::work& tx) -> absl::StatusOr<CreateOutcome> { return CreateOrGetIn(tx, op); });
    // Only the id can still conflict: never hand back another owner's row.
    if (absl::IsAlreadyExists(outcome.status())) {
      return absl::InternalError("operation id collision");
    }
    return ToStoreError(std::move(outcome));
  }

  absl::StatusOr<Operation> Get(const std::string& id) override {
    return ToStoreError(
        pool_->TransactFor<Operation>([&](pqxx::work& tx) -> absl::StatusOr<Operation> {
          absl::StatusOr<std::optional<Operation>> op = QueryOne(tx, "WHERE id = $1", id);
          if (!op.ok()) return op.status();
          if (!*op) return absl::NotFoundError(absl::StrCat("operation ", id, " not found"));
          return std::move(**op);
        }));
  }

  absl::StatusOr<std::optional<Operation>> ClaimNext(const std::string& runner_id, int64_t now_ms,
                                                     int64_t lease_ms) override {
    if (absl::Status s = ValidateLease(runner_id, lease_ms); !s.ok()) return s;
    using Claimed = std::optional<Operation>;
    return ToStoreError(pool_->TransactFor<Claimed>([&](pqxx::work& tx) -> absl::StatusOr<Claimed> {
      // Rows another replica holds are skipped, not waited for.
      absl::StatusOr<Claimed> next = QueryOne(
          tx, "WHERE status = $1 ORDER BY created_at_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED",
          Name(OperationStatus::kQueued));
      if (!next.ok() || !*next) return next;
      ApplyClaim(**next, runner_id, now_ms, lease_ms);
      Save(tx, **next);
      return next;
    }));
  }

  absl::StatusOr<Operation> Finish(const std::string& id, OperationStatus status,
                                   const std::string& result, int64_t now_ms) override {
    if (absl::Status s = ValidateFinishStatus(status); !s.ok()) return s;
    return Transition(id, [&](Operation& op) -> absl::StatusOr<bool> {
      if (absl::Status s = ApplyFinish(op, status, result, now_ms); !s.ok()) return s;
      return true;
    });
  }

  absl::StatusOr<Operation> RequestCancel(const std::string& id, int64_t now_ms) override {
    return Transition(
        id, [&](Operation& op) -> absl::StatusOr<bool> { return ApplyCancel(op, now_ms); });
  }

  absl::StatusOr<int> MarkRunningUncertain(const std::string& runner_id, int64_t now_ms) override {
    if (runner_id.empty()) {
      return absl::InvalidArgumentError("MarkRunningUncertain needs a runner id");
    }
    return ToStoreError(pool_->TransactFor<int>([&](pqxx::work& tx) -> absl::StatusOr<int> {
      pqxx::result marked =
          tx.exec_params(absl::StrCat(kSetUncertain, "WHERE status = $3 AND claimed_by = $4"),
                         Name(OperationStatus::kOutcomeUncertain), now_ms,
                         Name(OperationStatus::kRunning), runner_id);
      return static_cast<int>(marked.affected_rows());
    }));
  }

  absl::StatusOr<std::vector<LeaseRenewal>> RenewLeases(const std::string& runner_id,
                                                        const std::vector<std::string>& ids,
                                                        int64_t now_ms, int64_t lease_ms) override {
    if (absl::Status s = ValidateLease(runner_id, lease_ms); !s.ok()) return s;
    using Renewals = std::vector<LeaseRenewal>;
    return ToStoreError(
        pool_->TransactFor<Renewals>([&](pqxx::work& tx) -> absl::StatusOr<Renewals> {
          Renewals renewed;
          // One statement per id: a runner holds at most a few (its workers).
          for (const std::string& id : ids) {
            pqxx::result row = tx.exec_params(
                "UPDATE chrono_operations SET lease_expires_at_ms = $1 "
                "WHERE id = $2 AND status = $3 AND claimed_by = $4 RETURNING cancel_requested",
                LeaseEnd(now_ms, lease_ms), id, Name(OperationStatus::kRunning), runner_id);
            if (!row.empty()) renewed.push_back({id, row[0][0].as<bool>()});
          }
          return renewed;
        }));
  }

  absl::StatusOr<int> SettleExpiredLeases(int64_t now_ms) override {
    return ToStoreError(pool_->TransactFor<int>([&](pqxx::work& tx) -> absl::StatusOr<int> {
      // A row a renewal or another settler holds is re-checked once it is
      // free (READ COMMITTED), so a renewed lease is never settled and no
      // operation is settled twice.
      pqxx::result settled = tx.exec_params(
          absl::StrCat(kSetUncertain, "WHERE status = $3 AND lease_expires_at_ms <= $2"),
          Name(OperationStatus::kOutcomeUncertain), now_ms, Name(OperationStatus::kRunning));
      return static_cast<int>(settled.affected_rows());
    }));
  }

  absl::StatusOr<int> ExpireOld(int64_t now_ms, int64_t tombstone_keep_ms) override {
    if (tombstone_keep_ms < 0) return absl::InvalidArgumentError("tombstone_keep_ms < 0");
    return ToStoreError(pool_->TransactFor<int>([&](pqxx::work& tx) -> absl::StatusOr<int> {
      pqxx::result locked = tx.exec_params("SELECT pg_try_advisory_xact_lock($1, hashtext($2))",
                                           store::kPgAdvisoryLockSpace, "chrono.expiry");
      if (!locked[0][0].as<bool>()) return 0;  // another replica is sweeping
      // Deleted first, so a tombstone made below lives until a later call
      // even when tombstone_keep_ms is 0.
      tx.exec_params("DELETE FROM chrono_operations WHERE expired AND expires_at_ms <= $1",
                     TombstoneCutoff(now_ms, tombstone_keep_ms));
      pqxx::result expired = tx.exec_params(
          "UPDATE chrono_operations SET expired = true, request = '', result = '', "
          "sealed_credentials = ''::bytea "
          "WHERE NOT expired AND status NOT IN ($1, $2) AND expires_at_ms <= $3",
          Name(OperationStatus::kQueued), Name(OperationStatus::kRunning), now_ms);
      return static_cast<int>(expired.affected_rows());
    }));
  }

  absl::StatusOr<int64_t> CountQueuedAhead(const Operation& op, int64_t at_most) override {
    return ToStoreError(pool_->TransactFor<int64_t>([&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
      return tx
          .exec_params(
              "SELECT count(*) FROM (SELECT 1 FROM chrono_operations WHERE status = $1 AND "
              "(created_at_ms, id) < ($2, $3) LIMIT $4) AS ahead",
              Name(OperationStatus::kQueued), op.created_at_ms, op.id,
              std::max<int64_t>(at_most, 0))[0][0]
          .as<int64_t>();
    }));
  }

  absl::StatusOr<int64_t> CountWithStatus(OperationStatus status) override {
    return ToStoreError(pool_->TransactFor<int64_t>([&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
      return tx
          .exec_params("SELECT count(*) FROM chrono_operations WHERE status = $1",
                       Name(status))[0][0]
          .as<int64_t>();
    }));
  }

  absl::StatusOr<std::vector<Operation>> ListOwned(const OperationListQuery& q) override {
    using Ops = std::vector<Operation>;
    const base::PagePosition after = q.after.value_or(base::PagePosition{});
    return ToStoreError(pool_->TransactFor<Ops>([&](pqxx::work& tx) -> absl::StatusOr<Ops> {
      pqxx::result rows = tx.exec_params(
          absl::StrCat("SELECT ", kColumns,
                       " FROM chrono_operations WHERE owner = $1 AND ($2 = '' OR status = $2) "
                       "AND NOT expired AND (status IN ('queued', 'running') OR "
                       "expires_at_ms > $3) AND (NOT $4 OR created_at_ms < $5 OR "
                       "(created_at_ms = $5 AND id < $6)) "
                       "ORDER BY created_at_ms DESC, id DESC LIMIT $7"),
          q.owner, q.status ? Name(*q.status) : std::string(), q.now_ms, q.after.has_value(),
          after.created_at_ms, after.id, q.limit);
      Ops ops;
      for (const pqxx::row& row : rows) {
        absl::StatusOr<Operation> op = ReadRow(row);
        if (!op.ok()) return op.status();
        ops.push_back(std::move(*op));
      }
      return ops;
    }));
  }

  absl::Status Ping() override {
    // Reads the table, so a dropped schema fails the probe as well.
    return ToStoreError(pool_->Transact([](pqxx::work& tx) {
      tx.exec("SELECT count(*) FROM chrono_operations WHERE id = ''");
      return absl::OkStatus();
    }));
  }

 private:
  static absl::StatusOr<CreateOutcome> CreateOrGetIn(pqxx::work& tx, const Operation& op) {
    // The insert waits for a concurrent inserter of the same key to commit,
    // then does nothing; each statement reads the latest committed rows
    // (READ COMMITTED), so the SELECT sees that inserter's row. A row deleted
    // in between (its tombstone expired) frees the key: insert again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      pqxx::result inserted = tx.exec_params(
          InsertSql(), op.id, op.owner, op.idempotency_key_hash, op.fingerprint, op.request,
          pqxx::binarystring(op.sealed_credentials), Name(op.status), op.created_at_ms,
          op.started_at_ms, op.finished_at_ms, op.expires_at_ms, op.version, op.cancel_requested,
          op.result, op.claimed_by, op.expired, op.lease_expires_at_ms);
      if (!inserted.empty()) return CreateOutcome{op, true};
      absl::StatusOr<std::optional<Operation>> stored = QueryOne(
          tx, "WHERE owner = $1 AND idempotency_key_hash = $2", op.owner, op.idempotency_key_hash);
      if (!stored.ok()) return stored.status();
      if (*stored) return CreateOutcome{std::move(**stored), false};
    }
    return absl::UnavailableError("the idempotency key's operation kept vanishing; retry");
  }

  // Loads `id` locked, applies `change` (which returns whether it modified
  // the operation, or an error) and stores the result, in one transaction.
  absl::StatusOr<Operation> Transition(
      const std::string& id, const std::function<absl::StatusOr<bool>(Operation&)>& change) {
    return ToStoreError(
        pool_->TransactFor<Operation>([&](pqxx::work& tx) -> absl::StatusOr<Operation> {
          absl::StatusOr<Operation> op = LoadForUpdate(tx, id);
          if (!op.ok()) return op.status();
          absl::StatusOr<bool> changed = change(*op);
          if (!changed.ok()) return changed.status();
          if (*changed) Save(tx, *op);
          return op;
        }));
  }

  std::unique_ptr<PgPool> pool_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<OperationStore>> OpenPostgresOperationStore(
    const std::string& conninfo) {
  absl::StatusOr<std::unique_ptr<PgPool>> pool = PgPool::Connect(conninfo);
  if (!pool.ok()) return pool.status();
  if (absl::Status s = store::ApplyPgMigrations(**pool, "chrono", kMigrations); !s.ok()) return s;
  return std::make_unique<PostgresOperationStore>(std::move(*pool));
}

}  // namespace aevatar::chrono
