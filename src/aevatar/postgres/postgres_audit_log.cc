#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "aevatar/audit/audit_append.h"
#include "aevatar/postgres/postgres_stores.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;

// Released migrations are never edited; append new ones.
//
// Append-only, as in SQLite: this file issues only INSERT (… DO NOTHING) and
// SELECT on the table, and the triggers refuse UPDATE, DELETE and TRUNCATE
// by anything else. `seq` gives the append order.
constexpr store::Migration kAuditMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_audit_records (
  seq            BIGSERIAL NOT NULL PRIMARY KEY,
  record_id      TEXT      NOT NULL UNIQUE,
  kind           TEXT      NOT NULL CHECK (kind <> ''),
  run_id         TEXT      NOT NULL CHECK (run_id <> ''),
  workflow_id    TEXT      NOT NULL,
  step_id        TEXT      NOT NULL,
  call_id        TEXT      NOT NULL,
  request_id     TEXT      NOT NULL,
  approval_id    TEXT      NOT NULL,
  correlation_id TEXT      NOT NULL,
  causation_id   TEXT      NOT NULL,
  fact           TEXT      NOT NULL,
  trace_id       TEXT      NOT NULL,
  span_id        TEXT      NOT NULL,
  traceparent    TEXT      NOT NULL,
  tracestate     TEXT      NOT NULL,
  occurred_at_ms BIGINT    NOT NULL,
  recorded_at_ms BIGINT    NOT NULL,
  content_hash   TEXT      NOT NULL,
  -- The semantic slot: at most one record per (run, step, call, kind).
  CONSTRAINT aevatar_audit_records_slot UNIQUE (run_id, step_id, call_id, kind)
);
CREATE INDEX aevatar_audit_records_run ON aevatar_audit_records (run_id, seq);
CREATE FUNCTION aevatar_audit_records_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'aevatar_audit_records is append-only';
END
$$;
CREATE TRIGGER aevatar_audit_records_no_rewrite BEFORE UPDATE OR DELETE ON aevatar_audit_records
  FOR EACH ROW EXECUTE FUNCTION aevatar_audit_records_refuse();
CREATE TRIGGER aevatar_audit_records_no_truncate BEFORE TRUNCATE ON aevatar_audit_records
  FOR EACH STATEMENT EXECUTE FUNCTION aevatar_audit_records_refuse();
)sql"},
};

const std::string& AuditInsertSql() {
  static const std::string* const sql = new std::string(absl::StrCat(
      "INSERT INTO aevatar_audit_records (", kAuditColumns,
      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
      "ON CONFLICT ON CONSTRAINT aevatar_audit_records_slot DO NOTHING RETURNING seq"));
  return *sql;
}

absl::StatusOr<AuditRecord> AuditFromRow(const pqxx::row& row) {
  AuditRecord r;
  r.record_id = row[0].as<std::string>();
  r.kind = row[1].as<std::string>();
  r.run_id = row[2].as<std::string>();
  r.workflow_id = row[3].as<std::string>();
  r.step_id = row[4].as<std::string>();
  r.call_id = row[5].as<std::string>();
  r.request_id = row[6].as<std::string>();
  r.approval_id = row[7].as<std::string>();
  r.correlation_id = row[8].as<std::string>();
  r.causation_id = row[9].as<std::string>();
  absl::StatusOr<nlohmann::json> fact = ParseStoredFact(row[10].as<std::string>(), r.record_id);
  if (!fact.ok()) return fact.status();
  r.fact = std::move(*fact);
  r.trace.trace_id = row[11].as<std::string>();
  r.trace.span_id = row[12].as<std::string>();
  r.trace.traceparent = row[13].as<std::string>();
  r.trace.tracestate = row[14].as<std::string>();
  r.occurred_at_ms = row[15].as<int64_t>();
  r.recorded_at_ms = row[16].as<int64_t>();
  r.content_hash = row[17].as<std::string>();
  return r;
}

class PostgresAuditLog final : public AuditLog {
 public:
  explicit PostgresAuditLog(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  absl::StatusOr<AppendOutcome> Append(AuditRecord record) override {
    if (absl::Status s = PrepareForAppend(record); !s.ok()) return s;
    const std::string fact_text = record.fact.dump();
    // The slot's occupant's hash when the slot was taken; nullopt when
    // this call appended.
    using Occupant = std::optional<std::string>;
    absl::StatusOr<Occupant> occupant =
        pool_->TransactFor<Occupant>([&](pqxx::work& tx) -> absl::StatusOr<Occupant> {
          // A concurrent appender of the slot (any replica) makes this
          // INSERT wait for its commit, then do nothing; the SELECT (a new
          // snapshot under READ COMMITTED) then sees its row.
          const AuditRecord& r = record;
          pqxx::result inserted = tx.exec_params(
              AuditInsertSql(), r.record_id, r.kind, r.run_id, r.workflow_id, r.step_id, r.call_id,
              r.request_id, r.approval_id, r.correlation_id, r.causation_id, fact_text,
              r.trace.trace_id, r.trace.span_id, r.trace.traceparent, r.trace.tracestate,
              r.occurred_at_ms, r.recorded_at_ms, r.content_hash);
          if (!inserted.empty()) return Occupant();
          pqxx::result stored = tx.exec_params(
              "SELECT content_hash FROM aevatar_audit_records "
              "WHERE run_id = $1 AND step_id = $2 AND call_id = $3 AND kind = $4",
              r.run_id, r.step_id, r.call_id, r.kind);
          if (stored.empty()) return absl::UnavailableError("the audit slot changed; retry");
          return Occupant(stored[0][0].as<std::string>());
        });
    if (!occupant.ok()) {
      // The slot was free (ON CONFLICT took it otherwise): only record_id clashes.
      if (absl::IsAlreadyExists(occupant.status())) {
        return absl::AlreadyExistsError("audit record_id already used by another slot");
      }
      return occupant.status();
    }
    if (!*occupant) return AppendOutcome::kAppended;
    return OccupiedSlotOutcome(record, **occupant);
  }

  absl::StatusOr<std::vector<AuditRecord>> ForRun(const std::string& run_id) override {
    using Records = std::vector<AuditRecord>;
    return pool_->TransactFor<Records>([&](pqxx::work& tx) -> absl::StatusOr<Records> {
      pqxx::result rows =
          tx.exec_params(absl::StrCat("SELECT ", kAuditColumns,
                                      " FROM aevatar_audit_records WHERE run_id = $1 ORDER BY seq"),
                         run_id);
      Records records;
      for (const auto& row : rows) {
        absl::StatusOr<AuditRecord> record = AuditFromRow(row);
        if (!record.ok()) return record.status();
        records.push_back(std::move(*record));
      }
      return records;
    });
  }

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AuditLog>> OpenPostgresAuditLog(
    std::shared_ptr<store::PgPool> pool) {
  if (pool == nullptr) return absl::InvalidArgumentError("the audit log needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.audit", kAuditMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresAuditLog>(std::move(pool));
}

}  // namespace aevatar::orchestrator
