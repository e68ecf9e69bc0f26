#ifndef AEVATAR_AEVATAR_RUNTIME_WORKFLOW_STORE_H_
#define AEVATAR_AEVATAR_RUNTIME_WORKFLOW_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// A saved workflow and, once bound, its owner's admission proof and the
// authorization catalog built from the NyxID facts of that admission
// (authorization_catalog.h).
struct SavedWorkflow {
  std::string workflow_id;
  std::string owner;
  nlohmann::json definition;  // WorkflowToJson form
  std::string digest;
  nlohmann::json admission_proof;  // null until bound
  int64_t saved_at_ms = 0;
  nlohmann::json authorization_catalog;  // null until bound (or bound by an older release)
};

// One run: the actor's persisted state. `state` never holds a credential,
// source code, an idempotency key or invocation details (those live sealed in
// the vault, referenced by id).
struct RunRecord {
  std::string run_id;
  std::string owner;
  std::string workflow_id;
  std::string phase;  // see run_state.h
  nlohmann::json state;
  int64_t version = 0;  // optimistic concurrency: +1 per committed turn
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

struct RunEvent {
  int64_t seq = 0;  // global order
  std::string run_id;
  int64_t at_ms = 0;
  std::string type;  // "run.started", "step.submitted", "exchange", "step.completed", …
  nlohmann::json data;
};

// The run's next durable self-callback (at most one per run).
struct Callback {
  std::string callback_id;
  std::string run_id;
  int64_t due_at_ms = 0;
};

// What a turn's commit left: the run as now stored (so that a turn that
// follows at once need not read it back) and its next callback.
struct CommittedTurn {
  RunRecord run;
  std::optional<Callback> next;  // nullopt: none
  bool lease_released = false;   // the commit gave up the delivery's lease
};

// Where a page of ListRuns ended: the last run it held. The next page holds
// the runs after it in the listing order (created_at_ms, then run_id, both
// descending).
struct RunListPosition {
  int64_t created_at_ms = 0;
  std::string run_id;
};

// Which of an owner's runs ListRuns returns.
struct RunListQuery {
  std::string owner;
  std::string phase;                     // "" for every phase
  std::string workflow_id;               // "" for every workflow
  int limit = 50;                        // at most this many (>= 1)
  std::optional<RunListPosition> after;  // nullopt: from the newest
};

// What one actor turn commits, atomically.
struct TurnCommit {
  std::string run_id;
  int64_t expected_version = 0;  // Aborted when the stored version differs
  std::string phase;
  nlohmann::json state;
  std::vector<RunEvent> events;
  // Replaces the run's callback; nullopt removes it (the run is idle or done).
  std::optional<Callback> next_callback;
  // Sealed material to store first (ref -> sealed bytes).
  std::vector<std::pair<std::string, std::string>> sealed_puts;
  // Sealed material no turn reads any more (a finished step's), deleted with
  // the commit: a commit that fails deletes nothing.
  std::vector<std::string> sealed_deletes;
  // Non-empty: the commit also gives up this replica's lease of the run, as
  // ReleaseRunLease would (the last turn of a delivery), in the same write.
  std::string release_lease_of;
};

// Durable state of aevatar's workflows. Thread-safe; every write is committed
// before the call returns.
class WorkflowStore {
 public:
  virtual ~WorkflowStore() = default;
  virtual absl::Status SaveWorkflow(const SavedWorkflow& workflow) = 0;
  virtual absl::StatusOr<SavedWorkflow> GetWorkflow(const std::string& owner,
                                                    const std::string& workflow_id) = 0;
  // Creates the run with its first event, its callback and the sealed
  // material it references (ref -> sealed bytes), in one transaction.
  virtual absl::Status CreateRun(
      const RunRecord& run, const RunEvent& first_event, const Callback& first_callback,
      const std::vector<std::pair<std::string, std::string>>& sealed_puts) = 0;
  virtual absl::StatusOr<RunRecord> GetRun(const std::string& run_id) = 0;
  // The ids of `owner`'s runs that have not finished (phase not succeeded,
  // failed or stopped).
  virtual absl::StatusOr<std::vector<std::string>> LiveRunsOf(const std::string& owner) = 0;
  // The ids of `owner`'s runs, newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<std::string>> RecentRunsOf(const std::string& owner,
                                                                int limit) = 0;
  // `query.owner`'s runs matching its phase and workflow, newest first
  // (created_at_ms, then run_id, both descending), after `query.after` when
  // set, at most `query.limit`. Runs created while a listing is paged through
  // never shift the pages after the cursor.
  virtual absl::StatusOr<std::vector<RunRecord>> ListRuns(const RunListQuery& query) = 0;
  // Returns the committed version.
  virtual absl::StatusOr<int64_t> CommitTurn(const TurnCommit& commit) = 0;
  virtual absl::StatusOr<std::vector<RunEvent>> EventsAfter(const std::string& run_id,
                                                            int64_t after_seq) = 0;
  // Callbacks due at or before `now_ms`, oldest first.
  virtual absl::StatusOr<std::vector<Callback>> DueCallbacks(int64_t now_ms, int limit) = 0;

  // Run leases: which replica (one process sharing the store) may run a
  // run's turns. A lease is held by one replica id until `lease_until`;
  // once that passes without a renewal (the replica died or hung), any
  // replica may take it. Commits stay fenced by the run's version
  // (CommitTurn), so a replica that lost its lease mid-turn cannot overwrite
  // what the new owner committed.
  //
  // Claims, atomically, up to `limit` callbacks due at or before `now_ms`
  // (oldest first) whose run's lease is free or expired (a run this replica
  // holds is in flight here: not claimed again), and leases each of those
  // runs to `replica_id` until now_ms + lease_ms. Replicas claiming at once
  // never get the same run.
  virtual absl::StatusOr<std::vector<Callback>> ClaimDueCallbacks(const std::string& replica_id,
                                                                  int64_t now_ms, int64_t lease_ms,
                                                                  int limit) = 0;
  // Extends `replica_id`'s lease of `run_id` to now_ms + lease_ms; a lease
  // the replica gave up is left free. Returns false when another replica
  // holds it (it expired and was taken).
  virtual absl::StatusOr<bool> RenewRunLease(const std::string& run_id,
                                             const std::string& replica_id, int64_t now_ms,
                                             int64_t lease_ms) = 0;
  // Gives up `replica_id`'s lease of `run_id` (no-op when it holds none),
  // so the run's next callback may go to any replica at once.
  virtual absl::Status ReleaseRunLease(const std::string& run_id,
                                       const std::string& replica_id) = 0;
  // Frees every lease `replica_id` holds: a replica calls it as it starts,
  // since what an earlier process with its id held died with that process.
  // Returns how many runs were freed.
  virtual absl::StatusOr<int> ReleaseLeasesOf(const std::string& replica_id) = 0;
  virtual absl::StatusOr<std::optional<Callback>> CallbackOf(const std::string& run_id) = 0;
  virtual absl::StatusOr<std::string> GetSealed(const std::string& ref) = 0;
};

absl::StatusOr<std::unique_ptr<WorkflowStore>> OpenSqliteWorkflowStore(const std::string& path);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_WORKFLOW_STORE_H_
