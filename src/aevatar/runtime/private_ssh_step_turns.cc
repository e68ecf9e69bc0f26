// The turns of a private_ssh codex_exec workflow step, durably:
//
//   start      creates the owner's pending approval of the exact call
//              (private_ssh_gate.h), seals the arguments and commits the
//              step as awaiting_approval (event step.approval_required).
//   wait       each callback reads the approval: pending -> look again in
//              kApprovalPollMs; denied, expired or used elsewhere -> the step
//              fails typed; approved -> consumed, and the step is dispatched
//              with its timeout_ms starting now.
//   send       commits the marker "sent_at_ms" first, then makes the one
//              exchange with the run's sealed credential, the run's lock
//              released while it waits; the raw SSH response completes the
//              step (succeeded only for exit_code 0 and not timed_out).
//   uncertain  a turn that finds the marker but no result once the exchange
//              can no longer be running (aevatar stopped during it) ends the
//              step private_ssh_outcome_uncertain: Codex on the host is never
//              run a second time for one approval. Before that, such a turn
//              (a stop, say) only waits for the exchange's own completion.
#include "absl/strings/ascii.h"
#include "aevatar/approvals/private_ssh_gate.h"
#include "aevatar/runtime/codex_step_turns.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// How long after the step's deadline a sent call without a result is judged
// uncertain (the exchange is capped at the deadline).
constexpr int64_t kUncertainAfterMs = 30'000;

// The step's output: NyxID's raw SSH response, or its empty shape when the
// call failed typed.
json SshOutput(const json* result, const std::string& diagnostic_id) {
  if (result != nullptr) return *result;
  return {{"exit_code", nullptr},
          {"timed_out", false},
          {"stdout", ""},
          {"stderr", ""},
          {"diagnostic_id", diagnostic_id}};
}

absl::Status FailSshStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                         const std::string& code, const std::string& detail,
                         const PendingOperation& operation) {
  return CompleteCodexStep(deps, turn, step, "failed", SshOutput(nullptr, base::RandomId("diag_")),
                           code, detail, operation);
}

// Waiting for the owner's decision (attempts == 0).
absl::Status AwaitApproval(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                           PendingOperation& operation) {
  json& pending = turn.state()["pending"];
  const std::string approval_id = base::StringOr(pending, "approval_id", "");
  auto found = deps.approvals->Get(turn.run.owner, approval_id);
  if (!found.ok()) return found.status();  // a failed turn: retried with backoff
  if (!found->has_value()) {
    return FailSshStep(deps, turn, step, "approval_not_found", "the step's approval is gone",
                       operation);
  }
  switch (EffectiveState(**found, deps.now_ms)) {
    case ApprovalState::kPending:
      ScheduleIn(turn, deps.now_ms, kApprovalPollMs);
      return Commit(deps, turn);
    case ApprovalState::kDenied:
      return FailSshStep(deps, turn, step, "approval_denied", "the owner denied this call",
                         operation);
    case ApprovalState::kExpired:
      return FailSshStep(deps, turn, step, "approval_expired",
                         "nobody decided before the approval expired", operation);
    case ApprovalState::kUsed:
      return FailSshStep(deps, turn, step, "approval_already_used",
                         "the approval was used by another request", operation);
    case ApprovalState::kApproved:
      break;
  }
  auto consumed = deps.approvals->Consume(turn.run.owner, approval_id);
  if (!consumed.ok()) return consumed.status();
  if (!*consumed) {
    return FailSshStep(deps, turn, step, "approval_already_used",
                       "the approval was used by another request", operation);
  }
  operation.attempts = 1;
  operation.submitted_at_ms = deps.now_ms;
  operation.last_status = "running";
  pending["operation"] = operation.ToJson();
  pending["deadline_ms"] = deps.now_ms + step.timeout_ms;  // the step's time starts now
  CurrentStep(turn)["status"] = "running";
  AddEvent(turn, deps.now_ms, "step.approved",
           {{"step_id", step.id}, {"approval_id", approval_id}});
  ScheduleIn(turn, deps.now_ms, kAtOnceMs);
  return Commit(deps, turn);
}

// The one exchange (attempts == 1): the marker first, then the call.
absl::Status SendOnce(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                      PendingOperation& operation) {
  json& pending = turn.state()["pending"];
  auto material = LoadPendingMaterial(deps, pending);
  if (!material.ok()) return material.status();
  auto args = CodexExecArgsFromJson((*material)["arguments"]);
  if (!args.ok()) return args.status();
  auto credential = LoadCredential(deps, turn.state());
  if (!credential.ok()) return credential.status();
  const int64_t deadline = base::IntOr(pending, "deadline_ms", 0);
  operation.attempts = 2;
  pending["operation"] = operation.ToJson();
  pending["sent_at_ms"] = deps.now_ms;
  // This callback matters only if this turn dies: it comes after the
  // exchange's own bound, so it never judges a call still running.
  turn.next_due_ms = deadline + kUncertainAfterMs;
  turn.goes_on_after_commit = true;  // under the lease, renewed while it waits
  if (absl::Status st = Commit(deps, turn); !st.ok()) return st;
  turn.goes_on_after_commit = false;
  auto marked = deps.store->GetRun(turn.run.run_id);
  if (!marked.ok()) return marked.status();
  turn.run = std::move(*marked);
  absl::StatusOr<json> result = absl::UnknownError("not exchanged");
  {
    RunUnlocked unlocked(deps.run_lock);
    result = (*deps.private_ssh)(
        *credential, *args,
        std::chrono::milliseconds(std::max<int64_t>(1, deadline - deps.now_ms)));
  }
  // A message (a stop, NyxID facts) may have changed the run meanwhile: the
  // result completes the step on the run as it is now, never dropped, since
  // it can never be asked for again.
  auto fresh = deps.store->GetRun(turn.run.run_id);
  if (!fresh.ok()) return fresh.status();
  turn.run = std::move(*fresh);
  json& now_pending = turn.state()["pending"];
  if (!now_pending.is_object() || base::IntOr(now_pending, "sent_at_ms", -1) != deps.now_ms) {
    return absl::OkStatus();  // the step was settled meanwhile (it cannot be, but never twice)
  }
  auto now_operation = PendingOperation::FromJson(now_pending["operation"]);
  if (!now_operation.ok()) return now_operation.status();
  now_operation->last_status = "finished";
  if (!result.ok()) {
    std::string code = base::ApiCode(result.status());
    if (code == "ssh_route_timeout" && deadline > 0) code = "codex_exec_step_timeout";
    return FailSshStep(deps, turn, step, code, std::string(result.status().message()),
                       *now_operation);
  }
  const bool succeeded =
      base::IntOr(*result, "exit_code", -1) == 0 && !base::BoolOr(*result, "timed_out", false);
  std::string code;
  if (base::BoolOr(*result, "timed_out", false)) {
    code = "private_ssh_timed_out";
  } else if (!succeeded) {
    code = "private_ssh_nonzero_exit";
  }
  return CompleteCodexStep(deps, turn, step, succeeded ? "succeeded" : "failed", *result, code,
                           code.empty() ? "" : "the host's Codex did not succeed", *now_operation);
}

}  // namespace

absl::Status StartPrivateSshStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step,
                                 const json& arguments, const CodexExecArgs& args,
                                 const FailStepFn& fail_step) {
  if (deps.approvals == nullptr || deps.private_ssh == nullptr || !*deps.private_ssh) {
    return fail_step(kTargetNotConfigured, "admission",
                     "the private_ssh target is not configured on this aevatar host");
  }
  auto gate = GatePrivateSsh(*deps.approvals, turn.run.owner, args, "", deps.now_ms);
  if (!gate.ok()) {
    return fail_step(absl::AsciiStrToLower(base::ApiCode(gate.status())), "approval",
                     std::string(gate.status().message()));
  }
  json& state = turn.state();
  const json material = {{"arguments", arguments}};
  const std::string ref = base::RandomId("mat_");
  turn.sealed_puts.push_back({ref, SealJson(*deps.vault, material)});
  state["pending"] = {{"step_id", step.id},
                      {"tool", "codex_exec"},
                      {"target", "private_ssh"},
                      {"approval_id", gate->approval.id},
                      {"deadline_ms", 0},  // set once approved
                      {"material_ref", ref},
                      {"material_digest", "sha256:" + base::Sha256Hex(material.dump())},
                      {"operation", PendingOperation{}.ToJson()}};
  json& step_state = CurrentStep(turn);
  step_state["status"] = "awaiting_approval";
  step_state["approval_id"] = gate->approval.id;
  AddEvent(turn, deps.now_ms, "step.approval_required",
           {{"step_id", step.id},
            {"approval_id", gate->approval.id},
            {"call_digest", gate->approval.call_digest},
            {"expires_at_ms", gate->approval.expires_at_ms}});
  ScheduleIn(turn, deps.now_ms, kApprovalPollMs);
  return Commit(deps, turn);
}

absl::Status ProgressPrivateSshStep(const TurnDeps& deps, Turn& turn, const WorkflowStep& step) {
  json& state = turn.state();
  json& pending = state["pending"];
  auto operation = PendingOperation::FromJson(pending["operation"]);
  if (!operation.ok()) return operation.status();
  if (operation->attempts >= 2) {
    // Sent: until its exchange could no longer be running, that exchange's
    // own turn settles the step (a stop waits for it); past that, nobody will.
    const int64_t settle_after = base::IntOr(pending, "deadline_ms", 0) + kUncertainAfterMs;
    if (deps.now_ms < settle_after) {
      turn.next_due_ms = settle_after;
      return Commit(deps, turn);
    }
    return FailSshStep(deps, turn, step, "private_ssh_outcome_uncertain",
                       "aevatar stopped while the call ran; it is not repeated (it may have had "
                       "effects on the host)",
                       *operation);
  }
  if (state["stop"].is_object()) {
    return FailSshStep(deps, turn, step, "codex_exec_cancelled_before_submit",
                       "the run was stopped before the call was sent", *operation);
  }
  const int64_t deadline = base::IntOr(pending, "deadline_ms", 0);
  if (deadline > 0 && deps.now_ms >= deadline) {
    return FailSshStep(deps, turn, step, "codex_exec_step_timeout", "the step's timeout_ms elapsed",
                       *operation);
  }
  if (deps.approvals == nullptr || deps.private_ssh == nullptr || !*deps.private_ssh) {
    return FailSshStep(deps, turn, step, kTargetNotConfigured,
                       "the private_ssh target is not configured on this aevatar host", *operation);
  }
  if (operation->attempts == 0) return AwaitApproval(deps, turn, step, *operation);
  return SendOnce(deps, turn, step, *operation);
}

}  // namespace aevatar::orchestrator
