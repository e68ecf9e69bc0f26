#include "aevatar/audit/sqlite_audit_log.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/audit/audit_append.h"
#include "store/group_commit.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;
using store::Statement;

// Released migrations are never edited; append new ones.
//
// Append-only: the table has no update path. This file issues only INSERT
// and SELECT on it, and the two triggers below abort any UPDATE or DELETE
// that anything else might try, so a stored record and its fact are never
// rewritten. `seq` (the rowid) gives the append order; with no deletes it
// only grows.
constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE audit_records (
  seq            INTEGER NOT NULL PRIMARY KEY,
  record_id      TEXT    NOT NULL UNIQUE,
  kind           TEXT    NOT NULL CHECK (kind <> ''),
  run_id         TEXT    NOT NULL CHECK (run_id <> ''),
  workflow_id    TEXT    NOT NULL,
  step_id        TEXT    NOT NULL,
  call_id        TEXT    NOT NULL,
  request_id     TEXT    NOT NULL,
  approval_id    TEXT    NOT NULL,
  correlation_id TEXT    NOT NULL,
  causation_id   TEXT    NOT NULL,
  fact           TEXT    NOT NULL,
  trace_id       TEXT    NOT NULL,
  span_id        TEXT    NOT NULL,
  traceparent    TEXT    NOT NULL,
  tracestate     TEXT    NOT NULL,
  occurred_at_ms INTEGER NOT NULL,
  recorded_at_ms INTEGER NOT NULL,
  content_hash   TEXT    NOT NULL
) STRICT;
-- The semantic slot: at most one record per (run, step, call, kind).
CREATE UNIQUE INDEX audit_records_slot ON audit_records (run_id, step_id, call_id, kind);
-- ForRun: a run's records in append order.
CREATE INDEX audit_records_run ON audit_records (run_id, seq);
CREATE TRIGGER audit_records_no_update BEFORE UPDATE ON audit_records
BEGIN SELECT RAISE(ABORT, 'audit_records is append-only'); END;
CREATE TRIGGER audit_records_no_delete BEFORE DELETE ON audit_records
BEGIN SELECT RAISE(ABORT, 'audit_records is append-only'); END;
)sql"},
};

// Column order shared by kInsert (?1..?18) and every SELECT (ReadRow).
constexpr const char* kColumns = kAuditColumns;

constexpr char kInsert[] =
    "INSERT INTO audit_records (record_id, kind, run_id, workflow_id, step_id, call_id, "
    "request_id, approval_id, correlation_id, causation_id, fact, trace_id, span_id, "
    "traceparent, tracestate, occurred_at_ms, recorded_at_ms, content_hash) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";

absl::StatusOr<AuditRecord> ReadRow(const Statement& stmt) {
  AuditRecord r;
  r.record_id = stmt.ColumnText(0);
  r.kind = stmt.ColumnText(1);
  r.run_id = stmt.ColumnText(2);
  r.workflow_id = stmt.ColumnText(3);
  r.step_id = stmt.ColumnText(4);
  r.call_id = stmt.ColumnText(5);
  r.request_id = stmt.ColumnText(6);
  r.approval_id = stmt.ColumnText(7);
  r.correlation_id = stmt.ColumnText(8);
  r.causation_id = stmt.ColumnText(9);
  absl::StatusOr<nlohmann::json> fact = ParseStoredFact(stmt.ColumnText(10), r.record_id);
  if (!fact.ok()) return fact.status();
  r.fact = std::move(*fact);
  r.trace.trace_id = stmt.ColumnText(11);
  r.trace.span_id = stmt.ColumnText(12);
  r.trace.traceparent = stmt.ColumnText(13);
  r.trace.tracestate = stmt.ColumnText(14);
  r.occurred_at_ms = stmt.ColumnInt64(15);
  r.recorded_at_ms = stmt.ColumnInt64(16);
  r.content_hash = stmt.ColumnText(17);
  return r;
}

// The stored content hash of the record in `record`'s slot, if any.
absl::StatusOr<std::optional<std::string>> StoredHashInSlot(Database& db, const AuditRecord& r) {
  absl::StatusOr<Statement> stmt = db.Prepare(
      "SELECT content_hash FROM audit_records "
      "WHERE run_id = ?1 AND step_id = ?2 AND call_id = ?3 AND kind = ?4",
      {r.run_id, r.step_id, r.call_id, r.kind});
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::nullopt;
  return stmt->ColumnText(0);
}

// One connection behind one mutex: SQLite admits one writer at a time. Other
// processes on the same file are kept exclusive by BEGIN IMMEDIATE and
// busy_timeout.
class SqliteAuditLog final : public AuditLog {
 public:
  explicit SqliteAuditLog(Database db) : db_(std::move(db)) {}

  absl::StatusOr<AppendOutcome> Append(AuditRecord record) override {
    if (absl::Status s = PrepareForAppend(record); !s.ok()) return s;
    const std::string fact_text = record.fact.dump();  // stored verbatim; ValidateAuditRecord ran
    std::optional<std::string> stored_hash;
    absl::StatusOr<AppendOutcome> outcome =
        group_.RunForValue<AppendOutcome>([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return AppendLocked(record, fact_text, stored_hash);
        });
    // Outside the lock: a conflict is logged.
    if (outcome.ok() && stored_hash) return OccupiedSlotOutcome(record, *stored_hash);
    return outcome;
  }

  absl::StatusOr<std::vector<AuditRecord>> ForRun(const std::string& run_id) override {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Statement> stmt = db_.Prepare(
        absl::StrCat("SELECT ", kColumns, " FROM audit_records WHERE run_id = ?1 ORDER BY seq"),
        {run_id});
    if (!stmt.ok()) return stmt.status();
    std::vector<AuditRecord> records;
    while (true) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      absl::StatusOr<AuditRecord> record = ReadRow(*stmt);
      if (!record.ok()) return record.status();
      records.push_back(std::move(*record));
    }
    return records;
  }

 private:
  // Checks the slot and inserts in one write transaction (the group's), so
  // concurrent appenders (threads or processes) fill a slot exactly once. Sets
  // `stored_hash` to the occupant's hash when the slot is taken (the caller
  // then decides duplicate or conflict).
  absl::StatusOr<AppendOutcome> AppendLocked(const AuditRecord& r, const std::string& fact_text,
                                             std::optional<std::string>& stored_hash)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<std::optional<std::string>> existing = StoredHashInSlot(db_, r);
    if (!existing.ok()) return existing.status();
    if (*existing) {
      stored_hash = **existing;
      return AppendOutcome::kDuplicate;  // replaced by the caller's OccupiedSlotOutcome
    }
    absl::StatusOr<Statement> insert = db_.Prepare(kInsert);
    if (!insert.ok()) return insert.status();
    if (absl::Status s = insert->BindAll({r.record_id, r.kind, r.run_id, r.workflow_id, r.step_id,
                                          r.call_id, r.request_id, r.approval_id, r.correlation_id,
                                          r.causation_id, fact_text, r.trace.trace_id,
                                          r.trace.span_id, r.trace.traceparent, r.trace.tracestate,
                                          r.occurred_at_ms, r.recorded_at_ms, r.content_hash});
        !s.ok()) {
      return s;
    }
    if (absl::Status s = insert->Run(); !s.ok()) {
      // The slot was free inside this transaction, so only record_id can clash.
      if (absl::IsAlreadyExists(s)) {
        return absl::AlreadyExistsError("audit record_id already used by another slot");
      }
      return s;
    }
    return AppendOutcome::kAppended;
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  // Turns of several runs append at once: they share one WAL sync.
  store::GroupCommit group_{&db_, &mu_};
};

}  // namespace

absl::StatusOr<std::unique_ptr<AuditLog>> OpenSqliteAuditLog(const std::string& path) {
  absl::StatusOr<Database> db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status s = store::ApplyMigrations(*db, kMigrations); !s.ok()) return s;
  return std::make_unique<SqliteAuditLog>(std::move(*db));
}

}  // namespace aevatar::orchestrator
