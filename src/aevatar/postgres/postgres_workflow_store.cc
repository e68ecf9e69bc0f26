#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aevatar/postgres/postgres_stores.h"
#include "aevatar/runtime/workflow_rows.h"
#include "store/pg_migrations.h"
#include "store/pg_pool.h"

namespace aevatar::orchestrator {
namespace {

using store::PgPool;
using Sealed = std::vector<std::pair<std::string, std::string>>;

// Released migrations are never edited; append new ones.
constexpr store::Migration kWorkflowMigrations[] = {
    {1, R"sql(
CREATE TABLE aevatar_workflows (
  owner           TEXT   NOT NULL,
  workflow_id     TEXT   NOT NULL,
  definition      TEXT   NOT NULL,
  digest          TEXT   NOT NULL,
  admission_proof TEXT   NOT NULL,
  saved_at_ms     BIGINT NOT NULL,
  catalog         TEXT   NOT NULL,
  PRIMARY KEY (owner, workflow_id)
);
CREATE TABLE aevatar_runs (
  run_id         TEXT   NOT NULL PRIMARY KEY,
  owner          TEXT   NOT NULL,
  workflow_id    TEXT   NOT NULL,
  phase          TEXT   NOT NULL,
  state          TEXT   NOT NULL,
  version        BIGINT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  updated_at_ms  BIGINT NOT NULL,
  -- The replica whose turns the run is leased to, until lease_until_ms.
  lease_owner    TEXT   NOT NULL DEFAULT '',
  lease_until_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX aevatar_runs_by_owner ON aevatar_runs (owner, phase);
CREATE TABLE aevatar_run_events (
  seq    BIGSERIAL NOT NULL PRIMARY KEY,
  run_id TEXT      NOT NULL,
  at_ms  BIGINT    NOT NULL,
  type   TEXT      NOT NULL,
  data   TEXT      NOT NULL
);
CREATE INDEX aevatar_run_events_by_run ON aevatar_run_events (run_id, seq);
CREATE TABLE aevatar_callbacks (
  run_id      TEXT   NOT NULL PRIMARY KEY,
  callback_id TEXT   NOT NULL,
  due_at_ms   BIGINT NOT NULL
);
CREATE INDEX aevatar_callbacks_by_due ON aevatar_callbacks (due_at_ms);
CREATE TABLE aevatar_vault (
  ref    TEXT  NOT NULL PRIMARY KEY,
  sealed BYTEA NOT NULL
);
)sql"},
    // ListRuns pages an owner's runs newest first without sorting them all.
    {2, R"sql(
CREATE INDEX aevatar_runs_by_owner_created ON aevatar_runs (owner, created_at_ms, run_id);
)sql"},
};

std::vector<std::string> FirstColumn(const pqxx::result& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row[0].as<std::string>());
  return out;
}

void PutSealed(pqxx::work& tx, const Sealed& puts) {
  for (const auto& [ref, sealed] : puts) {
    tx.exec_params(
        "INSERT INTO aevatar_vault (ref, sealed) VALUES ($1, $2) "
        "ON CONFLICT (ref) DO UPDATE SET sealed = EXCLUDED.sealed",
        ref, pqxx::binarystring(sealed));
  }
}

void InsertEvent(pqxx::work& tx, const RunEvent& event) {
  tx.exec_params(
      "INSERT INTO aevatar_run_events (run_id, at_ms, type, data) VALUES ($1, $2, $3, $4)",
      event.run_id, event.at_ms, event.type, event.data.dump());
}

void PutCallback(pqxx::work& tx, const Callback& callback) {
  tx.exec_params(
      "INSERT INTO aevatar_callbacks (run_id, callback_id, due_at_ms) VALUES ($1, $2, $3) "
      "ON CONFLICT (run_id) DO UPDATE SET callback_id = EXCLUDED.callback_id, "
      "due_at_ms = EXCLUDED.due_at_ms",
      callback.run_id, callback.callback_id, callback.due_at_ms);
}

class PostgresWorkflowStore final : public WorkflowStore {
 public:
  explicit PostgresWorkflowStore(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  absl::Status SaveWorkflow(const SavedWorkflow& w) override {
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(
          "INSERT INTO aevatar_workflows (owner, workflow_id, definition, digest, "
          "admission_proof, saved_at_ms, catalog) VALUES ($1, $2, $3, $4, $5, $6, $7) "
          "ON CONFLICT (owner, workflow_id) DO UPDATE SET definition = EXCLUDED.definition, "
          "digest = EXCLUDED.digest, admission_proof = EXCLUDED.admission_proof, "
          "saved_at_ms = EXCLUDED.saved_at_ms, catalog = EXCLUDED.catalog",
          w.owner, w.workflow_id, w.definition.dump(), w.digest, w.admission_proof.dump(),
          w.saved_at_ms, w.authorization_catalog.dump());
      return absl::OkStatus();
    });
  }

  absl::StatusOr<SavedWorkflow> GetWorkflow(const std::string& owner,
                                            const std::string& workflow_id) override {
    return pool_->TransactFor<SavedWorkflow>([&](pqxx::work& tx) -> absl::StatusOr<SavedWorkflow> {
      pqxx::result rows = tx.exec_params(
          "SELECT definition, digest, admission_proof, saved_at_ms, catalog "
          "FROM aevatar_workflows WHERE owner = $1 AND workflow_id = $2",
          owner, workflow_id);
      if (rows.empty()) return WorkflowNotFound();
      const pqxx::row& r = rows[0];
      return SavedWorkflow{workflow_id,
                           owner,
                           ParseStoredJson(r[0].as<std::string>()),
                           r[1].as<std::string>(),
                           ParseStoredJson(r[2].as<std::string>()),
                           r[3].as<int64_t>(),
                           ParseStoredJson(r[4].as<std::string>())};
    });
  }

  absl::Status CreateRun(const RunRecord& run, const RunEvent& first_event,
                         const Callback& first_callback, const Sealed& sealed_puts) override {
    return pool_->Transact([&](pqxx::work& tx) {
      PutSealed(tx, sealed_puts);
      tx.exec_params(
          "INSERT INTO aevatar_runs (run_id, owner, workflow_id, phase, state, version, "
          "created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, 1, $6, $6)",
          run.run_id, run.owner, run.workflow_id, run.phase, run.state.dump(), run.created_at_ms);
      InsertEvent(tx, first_event);
      PutCallback(tx, first_callback);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<RunRecord> GetRun(const std::string& run_id) override {
    return pool_->TransactFor<RunRecord>([&](pqxx::work& tx) -> absl::StatusOr<RunRecord> {
      pqxx::result rows = tx.exec_params(
          "SELECT owner, workflow_id, phase, state, version, created_at_ms, updated_at_ms "
          "FROM aevatar_runs WHERE run_id = $1",
          run_id);
      if (rows.empty()) return RunNotFound();
      const pqxx::row& r = rows[0];
      return RunRecord{run_id,
                       r[0].as<std::string>(),
                       r[1].as<std::string>(),
                       r[2].as<std::string>(),
                       ParseStoredJson(r[3].as<std::string>()),
                       r[4].as<int64_t>(),
                       r[5].as<int64_t>(),
                       r[6].as<int64_t>()};
    });
  }

  absl::StatusOr<std::vector<std::string>> LiveRunsOf(const std::string& owner) override {
    return RunIds(absl::StrCat("SELECT run_id FROM aevatar_runs WHERE owner = $1 AND phase NOT IN ",
                               kTerminalPhasesSql, " ORDER BY created_at_ms"),
                  owner, std::nullopt);
  }

  absl::StatusOr<std::vector<std::string>> RecentRunsOf(const std::string& owner,
                                                        int limit) override {
    return RunIds(
        "SELECT run_id FROM aevatar_runs WHERE owner = $1 "
        "ORDER BY created_at_ms DESC, run_id LIMIT $2",
        owner, limit);
  }

  absl::StatusOr<std::vector<RunRecord>> ListRuns(const RunListQuery& q) override {
    using Runs = std::vector<RunRecord>;
    const RunListPosition after = q.after.value_or(RunListPosition{});
    return pool_->TransactFor<Runs>([&](pqxx::work& tx) -> absl::StatusOr<Runs> {
      pqxx::result rows = tx.exec_params(
          "SELECT run_id, owner, workflow_id, phase, state, version, created_at_ms, "
          "updated_at_ms FROM aevatar_runs WHERE owner = $1 AND ($2 = '' OR phase = $2) "
          "AND ($3 = '' OR workflow_id = $3) AND (NOT $4 OR created_at_ms < $5 OR "
          "(created_at_ms = $5 AND run_id < $6)) "
          "ORDER BY created_at_ms DESC, run_id DESC LIMIT $7",
          q.owner, q.phase, q.workflow_id, q.after.has_value(), after.created_at_ms, after.run_id,
          q.limit);
      Runs runs;
      for (const pqxx::row& r : rows) {
        runs.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(),
                        r[3].as<std::string>(), ParseStoredJson(r[4].as<std::string>()),
                        r[5].as<int64_t>(), r[6].as<int64_t>(), r[7].as<int64_t>()});
      }
      return runs;
    });
  }

  absl::StatusOr<int64_t> CommitTurn(const TurnCommit& c) override {
    return pool_->TransactFor<int64_t>([&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
      PutSealed(tx, c.sealed_puts);
      const int64_t now = c.events.empty() ? 0 : c.events.back().at_ms;
      // A concurrent committer of the same run (another replica) holds the
      // row until it commits; then the version no longer matches here.
      pqxx::result changed = tx.exec_params(
          "UPDATE aevatar_runs SET phase = $1, state = $2, version = version + 1, "
          "updated_at_ms = GREATEST(updated_at_ms, $3), "
          "lease_until_ms = CASE WHEN lease_owner = $6 THEN 0 ELSE lease_until_ms END, "
          "lease_owner = CASE WHEN lease_owner = $6 THEN '' ELSE lease_owner END "
          "WHERE run_id = $4 AND version = $5",
          c.phase, c.state.dump(), now, c.run_id, c.expected_version, c.release_lease_of);
      if (changed.affected_rows() != 1) return RunChangedSinceLoaded();
      for (const std::string& ref : c.sealed_deletes) {
        tx.exec_params("DELETE FROM aevatar_vault WHERE ref = $1", ref);
      }
      for (const RunEvent& event : c.events) InsertEvent(tx, event);
      if (c.next_callback) {
        PutCallback(tx, *c.next_callback);
      } else {
        tx.exec_params("DELETE FROM aevatar_callbacks WHERE run_id = $1", c.run_id);
      }
      return c.expected_version + 1;
    });
  }

  absl::StatusOr<std::vector<RunEvent>> EventsAfter(const std::string& run_id,
                                                    int64_t after_seq) override {
    using Events = std::vector<RunEvent>;
    return pool_->TransactFor<Events>([&](pqxx::work& tx) -> absl::StatusOr<Events> {
      pqxx::result rows = tx.exec_params(
          "SELECT seq, at_ms, type, data FROM aevatar_run_events "
          "WHERE run_id = $1 AND seq > $2 ORDER BY seq",
          run_id, after_seq);
      Events events;
      for (const auto& r : rows) {
        events.push_back({r[0].as<int64_t>(), run_id, r[1].as<int64_t>(), r[2].as<std::string>(),
                          ParseStoredJson(r[3].as<std::string>())});
      }
      return events;
    });
  }

  absl::StatusOr<std::vector<Callback>> DueCallbacks(int64_t now_ms, int limit) override {
    using Callbacks = std::vector<Callback>;
    return pool_->TransactFor<Callbacks>([&](pqxx::work& tx) -> absl::StatusOr<Callbacks> {
      return ReadCallbacks(tx.exec_params(
          "SELECT callback_id, run_id, due_at_ms FROM aevatar_callbacks WHERE due_at_ms <= $1 "
          "ORDER BY due_at_ms LIMIT $2",
          now_ms, limit));
    });
  }

  absl::StatusOr<std::vector<Callback>> ClaimDueCallbacks(const std::string& replica_id,
                                                          int64_t now_ms, int64_t lease_ms,
                                                          int limit) override {
    using Callbacks = std::vector<Callback>;
    return pool_->TransactFor<Callbacks>([&](pqxx::work& tx) -> absl::StatusOr<Callbacks> {
      // Runs another replica is claiming or committing are skipped, not
      // waited for; they are looked at again on the next poll.
      Callbacks due = ReadCallbacks(
          tx.exec_params("SELECT c.callback_id, c.run_id, c.due_at_ms FROM aevatar_callbacks c "
                         "JOIN aevatar_runs r ON r.run_id = c.run_id "
                         "WHERE c.due_at_ms <= $1 AND r.lease_until_ms <= $1 "
                         "ORDER BY c.due_at_ms LIMIT $2 FOR UPDATE OF r SKIP LOCKED",
                         now_ms, limit));
      for (const Callback& callback : due) {
        tx.exec_params(
            "UPDATE aevatar_runs SET lease_owner = $1, lease_until_ms = $2 WHERE run_id = $3",
            replica_id, now_ms + lease_ms, callback.run_id);
      }
      return due;
    });
  }

  absl::StatusOr<bool> RenewRunLease(const std::string& run_id, const std::string& replica_id,
                                     int64_t now_ms, int64_t lease_ms) override {
    return pool_->TransactFor<bool>([&](pqxx::work& tx) -> absl::StatusOr<bool> {
      // Still ours when nobody took it, even past its expiry.
      if (tx.exec_params("UPDATE aevatar_runs SET lease_until_ms = $1 "
                         "WHERE run_id = $2 AND lease_owner = $3",
                         now_ms + lease_ms, run_id, replica_id)
              .affected_rows() == 1) {
        return true;
      }
      pqxx::result holder =
          tx.exec_params("SELECT lease_owner FROM aevatar_runs WHERE run_id = $1", run_id);
      // Given up (or gone): not taken.
      return holder.empty() || holder[0][0].as<std::string>().empty();
    });
  }

  absl::Status ReleaseRunLease(const std::string& run_id, const std::string& replica_id) override {
    return pool_->Transact([&](pqxx::work& tx) {
      tx.exec_params(
          "UPDATE aevatar_runs SET lease_owner = '', lease_until_ms = 0 "
          "WHERE run_id = $1 AND lease_owner = $2",
          run_id, replica_id);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<int> ReleaseLeasesOf(const std::string& replica_id) override {
    return pool_->TransactFor<int>([&](pqxx::work& tx) -> absl::StatusOr<int> {
      return static_cast<int>(
          tx.exec_params("UPDATE aevatar_runs SET lease_owner = '', lease_until_ms = 0 "
                         "WHERE lease_owner = $1",
                         replica_id)
              .affected_rows());
    });
  }

  absl::StatusOr<std::optional<Callback>> CallbackOf(const std::string& run_id) override {
    using Found = std::optional<Callback>;
    return pool_->TransactFor<Found>([&](pqxx::work& tx) -> absl::StatusOr<Found> {
      std::vector<Callback> found = ReadCallbacks(tx.exec_params(
          "SELECT callback_id, run_id, due_at_ms FROM aevatar_callbacks WHERE run_id = $1",
          run_id));
      if (found.empty()) return Found();
      return Found(found[0]);
    });
  }

  absl::StatusOr<std::string> GetSealed(const std::string& ref) override {
    return pool_->TransactFor<std::string>([&](pqxx::work& tx) -> absl::StatusOr<std::string> {
      pqxx::result rows = tx.exec_params("SELECT sealed FROM aevatar_vault WHERE ref = $1", ref);
      if (rows.empty()) return SealedMaterialMissing();
      return pqxx::binarystring(rows[0][0]).str();
    });
  }

 private:
  using Callbacks_ = std::vector<Callback>;

  static Callbacks_ ReadCallbacks(const pqxx::result& rows) {
    Callbacks_ out;
    for (const auto& r : rows) {
      out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<int64_t>()});
    }
    return out;
  }

  // The first column of `sql`'s rows, with the owner as $1 and, when set,
  // the limit as $2.
  absl::StatusOr<std::vector<std::string>> RunIds(const std::string& sql, const std::string& owner,
                                                  std::optional<int> limit) {
    using Ids = std::vector<std::string>;
    return pool_->TransactFor<Ids>([&](pqxx::work& tx) -> absl::StatusOr<Ids> {
      return FirstColumn(limit ? tx.exec_params(sql, owner, *limit) : tx.exec_params(sql, owner));
    });
  }

  std::shared_ptr<PgPool> pool_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WorkflowStore>> OpenPostgresWorkflowStore(
    std::shared_ptr<store::PgPool> pool) {
  if (pool == nullptr) return absl::InvalidArgumentError("the workflow store needs a database");
  if (absl::Status s = store::ApplyPgMigrations(*pool, "aevatar.workflows", kWorkflowMigrations);
      !s.ok()) {
    return s;
  }
  return std::make_unique<PostgresWorkflowStore>(std::move(pool));
}

}  // namespace aevatar::orchestrator
