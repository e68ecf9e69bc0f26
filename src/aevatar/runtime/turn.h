#ifndef AEVATAR_AEVATAR_RUNTIME_TURN_H_
#define AEVATAR_AEVATAR_RUNTIME_TURN_H_

// The pieces of one actor turn (private to the workflow runtime): the turn
// under construction and the functions that advance a run, one file per
// concern: turn.cc (commit, scheduling, loading), step_turns.cc (start and
// progress of a step), stop_turns.cc (stop cancellation), audit_turns.cc
// (frozen audit intents). Callers hold the run's lock.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aevatar/runtime/run_turns.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// A turn under construction: the loaded run plus what it will commit.
struct Turn {
  RunRecord run;
  nlohmann::json& state() { return run.state; }
  std::vector<RunEvent> events;
  std::vector<std::pair<std::string, std::string>> sealed_puts;
  std::vector<std::string> sealed_deletes;  // see TurnCommit
  std::optional<int64_t> next_due_ms;       // nullopt: no further callback
  // The turn goes on after its next commit (a private_ssh exchange, a
  // code_execute dispatch): that commit keeps the delivery's lease, whenever
  // its next callback is due.
  bool goes_on_after_commit = false;
};

void AddEvent(Turn& turn, int64_t now, std::string type, nlohmann::json data);
// Commits the turn: state, phase, events, sealed material and the next
// callback (whose id is saved in the state first), atomically.
absl::Status Commit(const TurnDeps& deps, Turn& turn);
// The delay of a next turn that follows at once: the smallest a callback
// takes (it needs a positive one). The runtime runs such a turn straight
// after the one that scheduled it (WorkflowRuntime::Deliver).
inline constexpr int64_t kAtOnceMs = 1;
// Schedules the next turn `delay_ms` from now; before a stop deadline or the
// pending step's deadline the delay is shortened to it, and it is never
// below kAtOnceMs.
void ScheduleIn(Turn& turn, int64_t now, int64_t delay_ms);
// Ends the run in `phase` (its outcome code, a run.<phase> event, no next
// callback) and deletes its sealed material with that commit
// (SealedRefsOfRun).
void FinishRun(Turn& turn, int64_t now, const std::string& phase, const std::string& outcome);
// The run's step index is past its last step (state "steps" holds one entry
// per step of the definition).
bool NoStepLeft(Turn& turn);
// Ends a run whose steps have all run: succeeded when every step did, else
// failed with step_failed.
void FinishAfterLastStep(Turn& turn, int64_t now);
nlohmann::json& CurrentStep(Turn& turn);
// Clears the run's pending operation and deletes its sealed material (the
// submit's key and request, source included) in the same commit: no turn
// reads it once the operation is gone.
void DropPending(Turn& turn);
// Every sealed ref `state` names: the pending operation's material, the
// caller's credential and the definition. A finished run reads none of them
// again, so its last commit deletes them all.
std::vector<std::string> SealedRefsOfRun(const nlohmann::json& state);
// Records the current step as finished with `status` and `output`: its state,
// the run's step outputs, the pending operation cleared (the completion
// replaces it in the same commit) and a step.completed event carrying the
// step's outcome_code. Tools set outcome_code on the step first.
void RecordStepFinished(Turn& turn, int64_t now, const std::string& step_id,
                        const std::string& status, const nlohmann::json& output);
// The run's workflow definition: from deps.definitions by the run's
// definition_digest, else unsealed, validated and remembered there.
absl::StatusOr<std::shared_ptr<const WorkflowDefinition>> LoadDefinition(
    const TurnDeps& deps, const nlohmann::json& state);
absl::StatusOr<std::string> LoadCredential(const TurnDeps& deps, const nlohmann::json& state);
// Gives a failed step a diagnostic id and writes the one log line that
// explains it: the id, the typed category and a bounded detail that names
// fields and HTTP statuses only (never source, keys, credentials or route ids).
void DiagnoseFailure(const Turn& turn, nlohmann::json& step_state, const std::string& code,
                     const std::string& detail);

// audit_turns.cc
// Freezes the audit intent of a terminal tool outcome and enters
// finalizing_audit; `then` says what follows once the audit is written
// (next_step, fail_run or stopped). A frozen intent is never replaced.
void FreezeAuditIntent(Turn& turn, int64_t now, const std::string& step_id, nlohmann::json fact,
                       const std::string& then);
// The running audit of a submitted operation. When the audit store cannot
// take it now it is kept in the state and written before the terminal one.
void AppendRunningAudit(const TurnDeps& deps, Turn& turn, const std::string& step_id,
                        const std::string& operation_id);
// Replays the frozen intent into the audit log (finalizing_audit).
absl::Status AuditStep(const TurnDeps& deps, Turn& turn);

// step_turns.cc
// Starts the current step: renders its arguments, seals the operation's
// material, and commits the pending operation before any exchange.
absl::Status StartStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition);
// One exchange of the pending operation; completes the step when it ends.
absl::Status ProgressStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition);

// stop_turns.cc
// Stop cancellation: before the frozen deadline, one cancel exchange carrying
// it; a real terminal outcome wins; past the deadline nothing new starts and
// code_execution_cancel_outcome_uncertain is frozen.
absl::Status StopStep(const TurnDeps& deps, Turn& turn, const WorkflowDefinition& definition);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_TURN_H_
