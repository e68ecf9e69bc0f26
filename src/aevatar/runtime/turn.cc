#include "aevatar/runtime/turn.h"

#include <algorithm>
#include <memory>

#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {

using nlohmann::json;

void AddEvent(Turn& turn, int64_t now, std::string type, json data) {
  turn.events.push_back({0, turn.run.run_id, now, std::move(type), std::move(data)});
}

absl::Status Commit(const TurnDeps& deps, Turn& turn) {
  TurnCommit commit;
  commit.run_id = turn.run.run_id;
  commit.expected_version = turn.run.version;
  commit.phase = turn.run.phase;
  commit.events = std::move(turn.events);
  commit.sealed_puts = std::move(turn.sealed_puts);
  commit.sealed_deletes = std::move(turn.sealed_deletes);
  if (turn.next_due_ms) {
    // The next callback's identity is saved with the state before it is scheduled.
    const std::string callback_id = base::RandomId("cb_");
    turn.state()["callback_id"] = callback_id;
    commit.next_callback = Callback{callback_id, turn.run.run_id, *turn.next_due_ms};
  } else {
    turn.state()["callback_id"] = nullptr;
  }
  const bool follows_at_once = turn.next_due_ms && *turn.next_due_ms <= deps.now_ms + kAtOnceMs;
  if (deps.lease_owner != nullptr && !follows_at_once && !turn.goes_on_after_commit) {
    commit.release_lease_of = *deps.lease_owner;
  }
  commit.state = std::move(turn.state());
  // FinishRun's event marks the turn that ends the run: told once committed.
  const bool finishes =
      std::any_of(commit.events.begin(), commit.events.end(),
                  [&](const RunEvent& event) { return event.type == "run." + commit.phase; });
  const int64_t last_event_ms = commit.events.empty() ? 0 : commit.events.back().at_ms;
  auto committed = deps.store->CommitTurn(commit);
  turn.state() = std::move(commit.state);
  // A turn that goes on after this commit commits next on this version.
  if (committed.ok()) turn.run.version = *committed;
  if (committed.ok() && deps.committed != nullptr) {
    // As the store now holds it (SqliteWorkflowStore::CommitTurn's columns).
    RunRecord stored = turn.run;
    stored.version = *committed;
    stored.updated_at_ms = std::max(stored.updated_at_ms, last_event_ms);
    *deps.committed =
        CommittedTurn{std::move(stored), commit.next_callback, !commit.release_lease_of.empty()};
  }
  if (committed.ok() && finishes && deps.on_run_finished != nullptr && *deps.on_run_finished) {
    (*deps.on_run_finished)(commit.phase,
                            static_cast<double>(deps.now_ms - turn.run.created_at_ms) / 1000.0);
  }
  return committed.status();
}

void ScheduleIn(Turn& turn, int64_t now, int64_t delay_ms) {
  const json& state = turn.state();
  for (int64_t deadline : {base::IntOr(state["stop"], "deadline_unix_ms", 0),
                           base::IntOr(state["pending"], "deadline_ms", 0)}) {
    if (now < deadline) delay_ms = std::min(delay_ms, deadline - now);
  }
  turn.next_due_ms = now + std::max(kAtOnceMs, delay_ms);
}

std::vector<std::string> SealedRefsOfRun(const json& state) {
  std::vector<std::string> refs;
  for (const std::string& ref :
       {base::StringOr(base::ObjectOrEmpty(state, "pending"), "material_ref", ""),
        base::StringOr(base::ObjectOrEmpty(state, "caller"), "credential_ref", ""),
        base::StringOr(state, "definition_ref", "")}) {
    if (!ref.empty()) refs.push_back(ref);
  }
  return refs;
}

void FinishRun(Turn& turn, int64_t now, const std::string& phase, const std::string& outcome) {
  for (std::string& ref : SealedRefsOfRun(turn.state())) {
    turn.sealed_deletes.push_back(std::move(ref));
  }
  turn.state()["pending"] = nullptr;
  turn.run.phase = phase;
  turn.state()["finished_at_ms"] = now;
  if (!outcome.empty()) turn.state()["outcome_code"] = outcome;
  AddEvent(turn, now, "run." + phase, {{"outcome_code", outcome}});
  turn.next_due_ms.reset();
}

bool NoStepLeft(Turn& turn) {
  json& state = turn.state();
  return state.value("step_index", 0) >= static_cast<int>(state["steps"].size());
}

void FinishAfterLastStep(Turn& turn, int64_t now) {
  const json& steps = turn.state()["steps"];
  const bool all_ok = std::all_of(steps.begin(), steps.end(), [](const json& step) {
    return base::StringOr(step, "status", "") == "succeeded";
  });
  FinishRun(turn, now, all_ok ? "succeeded" : "failed", all_ok ? "" : "step_failed");
}

void DropPending(Turn& turn) {
  json& pending = turn.state()["pending"];
  const std::string ref = base::StringOr(pending, "material_ref", "");
  if (!ref.empty()) turn.sealed_deletes.push_back(ref);
  pending = nullptr;
}

json& CurrentStep(Turn& turn) {
  json& state = turn.state();
  return state["steps"][state.value("step_index", 0)];
}

void RecordStepFinished(Turn& turn, int64_t now, const std::string& step_id,
                        const std::string& status, const json& output) {
  json& state = turn.state();
  json& step_state = CurrentStep(turn);
  step_state["status"] = status;
  step_state["output"] = output;
  step_state["finished_at_ms"] = now;
  state["step_outputs"][step_id] = output;
  DropPending(turn);
  AddEvent(turn, now, "step.completed",
           {{"step_id", step_id},
            {"status", status},
            {"outcome_code", step_state.value("outcome_code", "")}});
}

absl::StatusOr<std::shared_ptr<const WorkflowDefinition>> LoadDefinition(const TurnDeps& deps,
                                                                         const json& state) {
  const std::string digest = base::StringOr(state, "definition_digest", "");
  if (deps.definitions != nullptr && !digest.empty()) {
    if (auto cached = deps.definitions->Find(digest)) return cached;
  }
  auto sealed = deps.store->GetSealed(state.value("definition_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto opened = OpenSealedJson(*deps.vault, *sealed, "workflow definition");
  if (!opened.ok()) return opened.status();
  auto definition = WorkflowFromJson(*opened);
  if (!definition.ok()) return definition.status();
  auto loaded = std::make_shared<const WorkflowDefinition>(*std::move(definition));
  // Remembered only under the digest the run recorded, recomputed from the
  // content just unsealed: a hit is then this very content.
  if (deps.definitions != nullptr && loaded->digest == digest) deps.definitions->Put(loaded);
  return loaded;
}

absl::StatusOr<std::string> LoadCredential(const TurnDeps& deps, const json& state) {
  // An unattended run: the owner's Vault-backed Agent Key, read again now.
  if (base::StringOr(state["caller"], "credential_source", "") == "vault") {
    if (deps.agent_keys == nullptr || !*deps.agent_keys) {
      return base::ApiError(absl::StatusCode::kFailedPrecondition,
                            WorkflowRuntime::kAgentKeyMissingCode,
                            "this aevatar has no vault of Agent Keys for unattended runs");
    }
    return (*deps.agent_keys)(base::StringOr(state["caller"], "owner", ""));
  }
  auto sealed = deps.store->GetSealed(state["caller"].value("credential_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto credential = OpenSealedJson(*deps.vault, *sealed, "caller credential");
  if (!credential.ok()) return credential.status();
  return credential->value("credential", "");
}

void DiagnoseFailure(const Turn& turn, json& step_state, const std::string& code,
                     const std::string& detail) {
  const std::string diagnostic_id = http::NewDiagnosticId();
  step_state["diagnostic_id"] = diagnostic_id;
  base::Log(base::LogLevel::kWarn, "workflow.step_failed", turn.run.run_id,
            {{"diagnostic_id", diagnostic_id},
             {"category", code},
             {"step_id", base::StringOr(step_state, "id", "")},
             {"detail", detail}});
}

}  // namespace aevatar::orchestrator
