#ifndef AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_
#define AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_

// The turns of a codex_exec workflow step (private to the workflow runtime;
// theory of operation in codex_step_turns.cc). Callers hold the run's lock.

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "aevatar/runtime/turn.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// Fails the current step before anything was sent: (code, stage, detail).
using FailStepFn =
    std::function<absl::Status(const std::string&, const std::string&, const std::string&)>;

// The Idempotency-Key of a codex_exec step: "tool:v1:operation:" + SHA-256
// over (run id, step id, workflow digest, {"tool": "codex_exec", arguments}).
// The same run and step always give the same key (so a restart re-attaches
// to the same chrono-sandbox run); another run, step or argument never does.
std::string CodexStepIdempotencyKey(const std::string& run_id, const std::string& step_id,
                                    const std::string& workflow_digest,
                                    const nlohmann::json& arguments);

// Validates the rendered `arguments` (codex_exec's strict shape), fails the
// step typed when it cannot run (private_ssh: target_not_configured; managed
// Codex off: managed_target_disabled), else seals the material and commits
// the pending operation before any exchange.
absl::Status StartCodexStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                            const nlohmann::json& arguments, const FailStepFn& fail_step);

// Advances the pending codex_exec operation by one turn (dispatch, then the
// exchange), or ends the step when its timeout_ms elapsed.
absl::Status ProgressCodexStep(const TurnDeps& deps, Turn& turn,
                               const WorkflowDefinition& definition);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_
