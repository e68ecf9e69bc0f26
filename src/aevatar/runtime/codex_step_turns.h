#ifndef AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_
#define AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_

// The turns of a codex_exec workflow step (private to the workflow runtime;
// theory of operation in codex_step_turns.cc). Callers hold the run's lock.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "aevatar/codex/codex_exec_args.h"
#include "aevatar/runtime/durable_execution.h"
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
// step typed when it cannot run (managed Codex off: managed_target_disabled;
// private_ssh without approvals or a NyxID SSH client: target_not_configured),
// else seals the material and commits the pending operation before any
// exchange.
absl::Status StartCodexStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                            const nlohmann::json& arguments, const FailStepFn& fail_step);

// Completes the current step with `status` and `output`; `code` is the typed
// outcome ("" when the step succeeded; an expectation may still fail it).
// Freezes the audit intent and commits.
absl::Status CompleteCodexStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                               std::string status, nlohmann::json output, std::string code,
                               const std::string& detail, const PendingOperation& operation);

// Releases the run's lock for a scope and takes it back on leaving it, also
// when an exception unwinds (the caller's MutexLock then still owns it).
class RunUnlocked {
 public:
  explicit RunUnlocked(absl::Mutex* mu) ABSL_NO_THREAD_SAFETY_ANALYSIS : mu_(mu) {
    if (mu_ != nullptr) mu_->Unlock();
  }
  ~RunUnlocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (mu_ != nullptr) mu_->Lock();
  }
  RunUnlocked(const RunUnlocked&) = delete;
  RunUnlocked& operator=(const RunUnlocked&) = delete;

 private:
  absl::Mutex* mu_;
};

// private_ssh (private_ssh_step_turns.cc): asks the owner's approval of the
// exact call and waits for it durably (a callback every kApprovalPollMs,
// no thread held), then makes the one exchange at most once: a marker is
// committed before it is sent, and a turn that finds the marker without a
// result (aevatar restarted meanwhile) ends the step
// private_ssh_outcome_uncertain instead of running Codex on the host again.
inline constexpr int64_t kApprovalPollMs = 2000;
absl::Status StartPrivateSshStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                                 const nlohmann::json& arguments, const CodexExecArgs& args,
                                 const FailStepFn& fail_step);
absl::Status ProgressPrivateSshStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step);

// What a stop needs to have chrono-sandbox kill the run of a managed
// codex_exec step that was dispatched (its run may be going): the step's
// sealed Idempotency-Key (the run id derives from it) and the caller's
// allowed services. Nothing (nullopt) for another step, a step not yet
// dispatched, private_ssh (no cancel exists: docs/private-ssh.md) or
// material that does not open.
std::optional<WorkflowRuntime::CodexStepCancel> RunningCodexStep(const TurnDeps& deps,
                                                                 const nlohmann::json& state);

// Advances the pending codex_exec operation by one turn (dispatch, then the
// exchange), or ends the step when its timeout_ms elapsed.
absl::Status ProgressCodexStep(const TurnDeps& deps, Turn& turn,
                               const WorkflowDefinition& definition);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_CODEX_STEP_TURNS_H_
