#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/runtime/workflow_rows.h"
#include "aevatar/runtime/workflow_store.h"
#include "store/group_commit.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace aevatar::orchestrator {
namespace {

using store::Database;
using store::Transaction;

constexpr store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE workflows (
  owner TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  definition TEXT NOT NULL,
  digest TEXT NOT NULL,
  admission_proof TEXT NOT NULL,
  saved_at_ms INTEGER NOT NULL,
  PRIMARY KEY (owner, workflow_id)
);
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  state TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE TABLE run_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX run_events_by_run ON run_events (run_id, seq);
CREATE TABLE callbacks (
  run_id TEXT PRIMARY KEY,
  callback_id TEXT NOT NULL,
  due_at_ms INTEGER NOT NULL
);
CREATE INDEX callbacks_by_due ON callbacks (due_at_ms);
CREATE TABLE vault (
  ref TEXT PRIMARY KEY,
  sealed BLOB NOT NULL
);
)sql"},
    // The authorization catalog of a bound workflow, beside (not in) the
    // workflows row, whose shape older tooling still writes.
    {2, R"sql(
CREATE TABLE workflow_catalogs (
  owner TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  catalog TEXT NOT NULL,
  PRIMARY KEY (owner, workflow_id)
);
CREATE INDEX runs_by_owner ON runs (owner, phase);
)sql"},
    // Run leases (WorkflowStore::ClaimDueCallbacks): several processes may
    // share the file.
    {3, R"sql(
ALTER TABLE runs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_until_ms INTEGER NOT NULL DEFAULT 0;
)sql"},
    // ListRuns pages an owner's runs newest first without sorting them all.
    {4, R"sql(
CREATE INDEX runs_by_owner_created ON runs (owner, created_at_ms, run_id);
)sql"},
};

// The first column (a run id) of every row `stmt` yields.
absl::StatusOr<std::vector<std::string>> RunIds(absl::StatusOr<store::Statement> stmt) {
  if (!stmt.ok()) return stmt.status();
  std::vector<std::string> ids;
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back(stmt->ColumnText(0));
  }
}

// The (run_id, owner, workflow_id, phase, state, version, created_at_ms,
// updated_at_ms) rows `stmt` yields.
absl::StatusOr<std::vector<RunRecord>> RunRecords(absl::StatusOr<store::Statement> stmt) {
  if (!stmt.ok()) return stmt.status();
  std::vector<RunRecord> runs;
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return runs;
    runs.push_back({stmt->ColumnText(0), stmt->ColumnText(1), stmt->ColumnText(2),
                    stmt->ColumnText(3), ParseStoredJson(stmt->ColumnText(4)), stmt->ColumnInt64(5),
                    stmt->ColumnInt64(6), stmt->ColumnInt64(7)});
  }
}

// The (callback_id, run_id, due_at_ms) rows `stmt` yields.
absl::StatusOr<std::vector<Callback>> Callbacks(absl::StatusOr<store::Statement> stmt) {
  if (!stmt.ok()) return stmt.status();
  std::vector<Callback> callbacks;
  for (;;) {
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return callbacks;
    callbacks.push_back({stmt->ColumnText(0), stmt->ColumnText(1), stmt->ColumnInt64(2)});
  }
}

class SqliteWorkflowStore : public WorkflowStore {
 public:
  explicit SqliteWorkflowStore(Database db) : db_(std::move(db)) {}
  SqliteWorkflowStore(const SqliteWorkflowStore&) = delete;
  SqliteWorkflowStore& operator=(const SqliteWorkflowStore&) = delete;

  absl::Status SaveWorkflow(const SavedWorkflow& w) override {
    absl::MutexLock lock(&mu_);
    const std::string definition = w.definition.dump();
    const std::string proof = w.admission_proof.dump();
    const std::string catalog = w.authorization_catalog.dump();
    auto txn = Transaction::Begin(db_);
    if (!txn.ok()) return txn.status();
    if (auto st =
            db_.Run(
                   "INSERT INTO workflows VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, "
                   "workflow_id) DO UPDATE SET definition = ?3, digest = ?4, admission_proof = ?5, "
                   "saved_at_ms = ?6",
                   {w.owner, w.workflow_id, definition, w.digest, proof, w.saved_at_ms})
                .status();
        !st.ok()) {
      return st;
    }
    if (auto st = db_.Run("INSERT INTO workflow_catalogs VALUES (?1, ?2, ?3) ON CONFLICT (owner, "
                          "workflow_id) DO UPDATE SET catalog = ?3",
                          {w.owner, w.workflow_id, catalog})
                      .status();
        !st.ok()) {
      return st;
    }
    return txn->Commit();
  }

  absl::StatusOr<SavedWorkflow> GetWorkflow(const std::string& owner,
                                            const std::string& workflow_id) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT w.definition, w.digest, w.admission_proof, w.saved_at_ms, c.catalog FROM "
        "workflows w LEFT JOIN workflow_catalogs c ON c.owner = w.owner AND c.workflow_id = "
        "w.workflow_id WHERE w.owner = ?1 AND w.workflow_id = ?2",
        {owner, workflow_id});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return WorkflowNotFound();
    return SavedWorkflow{workflow_id,
                         owner,
                         ParseStoredJson(stmt->ColumnText(0)),
                         stmt->ColumnText(1),
                         ParseStoredJson(stmt->ColumnText(2)),
                         stmt->ColumnInt64(3),
                         ParseStoredJson(stmt->ColumnText(4))};
  }

  absl::Status CreateRun(
      const RunRecord& run, const RunEvent& first_event, const Callback& first_callback,
      const std::vector<std::pair<std::string, std::string>>& sealed_puts) override {
    const std::string state = run.state.dump();
    const std::string event_data = first_event.data.dump();
    return group_.Run([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      if (auto st = PutSealed(sealed_puts); !st.ok()) return st;
      if (auto st =
              db_.Run("INSERT INTO runs (run_id, owner, workflow_id, phase, state, version, "
                      "created_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)",
                      {run.run_id, run.owner, run.workflow_id, run.phase, state, run.created_at_ms})
                  .status();
          !st.ok()) {
        return st;
      }
      if (auto st = InsertEvent(first_event, event_data); !st.ok()) return st;
      return PutCallback(first_callback);
    });
  }

  absl::StatusOr<RunRecord> GetRun(const std::string& run_id) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT owner, workflow_id, phase, state, version, created_at_ms, updated_at_ms FROM runs "
        "WHERE run_id = ?1",
        {run_id});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return RunNotFound();
    return RunRecord{run_id,
                     stmt->ColumnText(0),
                     stmt->ColumnText(1),
                     stmt->ColumnText(2),
                     ParseStoredJson(stmt->ColumnText(3)),
                     stmt->ColumnInt64(4),
                     stmt->ColumnInt64(5),
                     stmt->ColumnInt64(6)};
  }

  absl::StatusOr<std::vector<std::string>> LiveRunsOf(const std::string& owner) override {
    absl::MutexLock lock(&mu_);
    return RunIds(
        db_.Prepare(absl::StrCat("SELECT run_id FROM runs WHERE owner = ?1 AND phase NOT IN ",
                                 kTerminalPhasesSql, " ORDER BY created_at_ms"),
                    {owner}));
  }

  absl::StatusOr<std::vector<std::string>> RecentRunsOf(const std::string& owner,
                                                        int limit) override {
    absl::MutexLock lock(&mu_);
    return RunIds(db_.Prepare(
        "SELECT run_id FROM runs WHERE owner = ?1 ORDER BY created_at_ms DESC, run_id LIMIT ?2",
        {owner, static_cast<int64_t>(limit)}));
  }

  absl::StatusOr<std::vector<RunRecord>> ListRuns(const RunListQuery& q) override {
    absl::MutexLock lock(&mu_);
    const RunListPosition after = q.after.value_or(RunListPosition{});
    return RunRecords(db_.Prepare(
        "SELECT run_id, owner, workflow_id, phase, state, version, created_at_ms, updated_at_ms "
        "FROM runs WHERE owner = ?1 AND (?2 = '' OR phase = ?2) AND (?3 = '' OR workflow_id = ?3) "
        "AND (?4 = 0 OR created_at_ms < ?5 OR (created_at_ms = ?5 AND run_id < ?6)) "
        "ORDER BY created_at_ms DESC, run_id DESC LIMIT ?7",
        {q.owner, q.phase, q.workflow_id, int64_t{q.after.has_value()}, after.created_at_ms,
         after.run_id, static_cast<int64_t>(q.limit)}));
  }

  absl::StatusOr<int64_t> CommitTurn(const TurnCommit& c) override {
    const int64_t now = c.events.empty() ? 0 : c.events.back().at_ms;
    // Serialized before the group's transaction, which every writer waits for.
    const std::string state = c.state.dump();
    std::vector<std::string> event_data;
    for (const RunEvent& event : c.events) event_data.push_back(event.data.dump());
    absl::Status written = group_.Run([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      if (auto st = PutSealed(c.sealed_puts); !st.ok()) return st;
      // A lease given up with the commit: as ReleaseRunLease, in this write.
      auto changed = db_.Run(
          "UPDATE runs SET phase = ?1, state = ?2, version = version + 1, updated_at_ms = "
          "MAX(updated_at_ms, ?3), lease_until_ms = CASE WHEN lease_owner = ?6 THEN 0 ELSE "
          "lease_until_ms END, lease_owner = CASE WHEN lease_owner = ?6 THEN '' ELSE lease_owner "
          "END WHERE run_id = ?4 AND version = ?5",
          {c.phase, state, now, c.run_id, c.expected_version, c.release_lease_of});
      if (!changed.ok()) return changed.status();
      if (*changed != 1) return RunChangedSinceLoaded();
      for (const std::string& ref : c.sealed_deletes) {
        if (auto st = db_.Run("DELETE FROM vault WHERE ref = ?1", {ref}).status(); !st.ok()) {
          return st;
        }
      }
      for (size_t i = 0; i < c.events.size(); ++i) {
        if (auto st = InsertEvent(c.events[i], event_data[i]); !st.ok()) return st;
      }
      if (c.next_callback) return PutCallback(*c.next_callback);
      return db_.Run("DELETE FROM callbacks WHERE run_id = ?1", {c.run_id}).status();
    });
    if (!written.ok()) return written;
    return c.expected_version + 1;
  }

  absl::StatusOr<std::vector<RunEvent>> EventsAfter(const std::string& run_id,
                                                    int64_t after_seq) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT seq, at_ms, type, data FROM run_events WHERE run_id = ?1 AND seq > ?2 ORDER BY "
        "seq",
        {run_id, after_seq});
    if (!stmt.ok()) return stmt.status();
    std::vector<RunEvent> events;
    for (;;) {
      auto row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      events.push_back({stmt->ColumnInt64(0), run_id, stmt->ColumnInt64(1), stmt->ColumnText(2),
                        ParseStoredJson(stmt->ColumnText(3))});
    }
    return events;
  }

  absl::StatusOr<std::vector<Callback>> DueCallbacks(int64_t now_ms, int limit) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare(
        "SELECT callback_id, run_id, due_at_ms FROM callbacks WHERE due_at_ms <= ?1 ORDER BY "
        "due_at_ms LIMIT ?2",
        {now_ms, int64_t{limit}});
    return Callbacks(std::move(stmt));
  }

  absl::StatusOr<std::vector<Callback>> ClaimDueCallbacks(const std::string& replica_id,
                                                          int64_t now_ms, int64_t lease_ms,
                                                          int limit) override {
    // In the group's transaction (BEGIN IMMEDIATE: another process on the
    // file waits), so the read and the lease writes below are one step for
    // every claimer; and the claim shares its WAL sync with the turns'
    // commits of the moment.
    return group_.RunForValue<std::vector<Callback>>(
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<std::vector<Callback>> {
          auto due = Callbacks(db_.Prepare(
              "SELECT c.callback_id, c.run_id, c.due_at_ms FROM callbacks c JOIN runs r ON "
              "r.run_id = c.run_id WHERE c.due_at_ms <= ?1 AND r.lease_until_ms <= ?1 "
              "ORDER BY c.due_at_ms LIMIT ?2",
              {now_ms, int64_t{limit}}));
          if (!due.ok()) return due.status();
          for (const Callback& callback : *due) {
            if (auto st = db_.Run("UPDATE runs SET lease_owner = ?1, lease_until_ms = ?2 WHERE "
                                  "run_id = ?3",
                                  {replica_id, now_ms + lease_ms, callback.run_id})
                              .status();
                !st.ok()) {
              return st;
            }
          }
          return due;
        });
  }

  absl::StatusOr<bool> RenewRunLease(const std::string& run_id, const std::string& replica_id,
                                     int64_t now_ms, int64_t lease_ms) override {
    absl::MutexLock lock(&mu_);
    // Still ours when nobody took it, even past its expiry.
    auto changed =
        db_.Run("UPDATE runs SET lease_until_ms = ?1 WHERE run_id = ?2 AND lease_owner = ?3",
                {now_ms + lease_ms, run_id, replica_id});
    if (!changed.ok()) return changed.status();
    if (*changed == 1) return true;
    auto holder = db_.Prepare("SELECT lease_owner FROM runs WHERE run_id = ?1", {run_id});
    if (!holder.ok()) return holder.status();
    auto row = holder->Step();
    if (!row.ok()) return row.status();
    return !*row || holder->ColumnText(0).empty();  // given up (or gone): not taken
  }

  absl::Status ReleaseRunLease(const std::string& run_id, const std::string& replica_id) override {
    return group_.Run([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return db_
          .Run(
              "UPDATE runs SET lease_owner = '', lease_until_ms = 0 WHERE run_id = ?1 AND "
              "lease_owner = ?2",
              {run_id, replica_id})
          .status();
    });
  }

  absl::StatusOr<int> ReleaseLeasesOf(const std::string& replica_id) override {
    absl::MutexLock lock(&mu_);
    auto freed =
        db_.Run("UPDATE runs SET lease_owner = '', lease_until_ms = 0 WHERE lease_owner = ?1",
                {replica_id});
    if (!freed.ok()) return freed.status();
    return static_cast<int>(*freed);
  }

  absl::StatusOr<std::optional<Callback>> CallbackOf(const std::string& run_id) override {
    absl::MutexLock lock(&mu_);
    auto stmt =
        db_.Prepare("SELECT callback_id, due_at_ms FROM callbacks WHERE run_id = ?1", {run_id});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<Callback>();
    return std::optional<Callback>(Callback{stmt->ColumnText(0), run_id, stmt->ColumnInt64(1)});
  }

  absl::StatusOr<std::string> GetSealed(const std::string& ref) override {
    absl::MutexLock lock(&mu_);
    auto stmt = db_.Prepare("SELECT sealed FROM vault WHERE ref = ?1", {ref});
    if (!stmt.ok()) return stmt.status();
    auto row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return SealedMaterialMissing();
    return stmt->ColumnBlob(0);
  }

 private:
  absl::Status PutSealed(const std::vector<std::pair<std::string, std::string>>& puts)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [ref, sealed] : puts) {
      if (auto st =
              db_.Run("INSERT OR REPLACE INTO vault VALUES (?1, ?2)", {ref, store::Blob(sealed)})
                  .status();
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  // `data`: event.data serialized.
  absl::Status InsertEvent(const RunEvent& event, const std::string& data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return db_
        .Run("INSERT INTO run_events (run_id, at_ms, type, data) VALUES (?1, ?2, ?3, ?4)",
             {event.run_id, event.at_ms, event.type, data})
        .status();
  }

  absl::Status PutCallback(const Callback& callback) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return db_
        .Run(
            "INSERT INTO callbacks VALUES (?1, ?2, ?3) ON CONFLICT (run_id) DO UPDATE SET "
            "callback_id = ?2, due_at_ms = ?3",
            {callback.run_id, callback.callback_id, callback.due_at_ms})
        .status();
  }

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  // The run writes of the workers (turns, new runs, lease releases) share
  // one transaction and one WAL sync when they arrive together.
  store::GroupCommit group_{&db_, &mu_};
};

}  // namespace

absl::StatusOr<std::unique_ptr<WorkflowStore>> OpenSqliteWorkflowStore(const std::string& path) {
  auto db = Database::Open(path);
  if (!db.ok()) return db.status();
  if (auto st = store::ApplyMigrations(*db, kMigrations); !st.ok()) return st;
  return std::unique_ptr<WorkflowStore>(new SqliteWorkflowStore(std::move(*db)));
}

}  // namespace aevatar::orchestrator
