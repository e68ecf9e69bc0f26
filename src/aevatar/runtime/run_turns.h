#ifndef AEVATAR_AEVATAR_RUNTIME_RUN_TURNS_H_
#define AEVATAR_AEVATAR_RUNTIME_RUN_TURNS_H_

// One actor turn of a workflow run (private to the workflow runtime).

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "aevatar/vault/sealed_json.h"

namespace aevatar::orchestrator {

struct TurnDeps {
  WorkflowStore* store;
  AuditLog* audit;
  const WorkflowRuntime::TransportFactory* transports;
  const WorkflowRuntime::FactsReader* facts;  // may hold an empty function
  const VaultKeyring* vault;                  // seals and opens protected material
  int64_t now_ms;
  const WorkflowRuntime::CodexExecutor* codex = nullptr;  // may be null or hold an empty function
  // The run's lock, held for the turn; only a codex_exec exchange releases
  // it while it waits (null: never released).
  absl::Mutex* run_lock = nullptr;
  ApprovalStore* approvals = nullptr;  // null: private_ssh is not configured
  const WorkflowRuntime::PrivateSshExecutor* private_ssh = nullptr;  // may hold an empty function
  // Options::on_run_finished; may be null or hold an empty function.
  const std::function<void(const std::string&, double)>* on_run_finished = nullptr;
  // Unattended runs' Agent Keys; may be null or hold an empty function.
  const WorkflowRuntime::AgentKeyResolver* agent_keys = nullptr;
  // Definitions already unsealed and validated; null: none kept.
  DefinitionCache* definitions = nullptr;
  // Set by Commit to what it committed; null: not told.
  std::optional<CommittedTurn>* committed = nullptr;
  // The replica whose delivery runs the turn (null: a message, no lease).
  // A commit whose next turn is not due at once gives the lease up with it:
  // the delivery ends there (WorkflowRuntime::Deliver).
  const std::string* lease_owner = nullptr;
};

// Runs the turn `callback` triggers, if it is still the run's current
// callback, and commits its outcome. `preloaded` is the run as the turn before
// committed it, when this one follows at once under the same lock; else
// the turn reads it from the store. Caller holds the run's lock.
absl::Status ExecuteTurn(const TurnDeps& deps, const Callback& callback,
                         std::optional<RunRecord> preloaded = std::nullopt);

// The material a pending step sealed before its side effect (`material_ref`),
// unsealed and checked against the digest run state recorded
// (`material_digest`); DataLoss when they differ.
absl::StatusOr<nlohmann::json> LoadPendingMaterial(const TurnDeps& deps,
                                                   const nlohmann::json& pending);

// Terminal phases of a run.
bool IsTerminalPhase(const std::string& phase);

// Delay for the n-th retry of a failing audit append or inventory read:
// 1 s doubling, capped at 30 s.
int64_t BackoffMs(int attempt);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_RUN_TURNS_H_
