// aevatar's managed codex_exec routes: the interactive tool call, the
// explicit credential lifecycle and the read-only readiness.
#include "aevatar/api/api_support.h"
#include "aevatar/approvals/private_ssh_gate.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/private_ssh_run.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

absl::Status Disabled() {
  return ManagedError(kManagedTargetDisabled,
                      "this aevatar host does not expose the managed_sandbox target");
}

// A caller-chosen Idempotency-Key (so a retried CLI call attaches to the same
// run), else a fresh one: every interactive call is its own run.
absl::StatusOr<std::string> InteractiveKey(const http::Request& request) {
  const std::string given = request.headers.Get("Idempotency-Key").value_or("");
  if (given.empty()) return base::RandomId("codex_");
  const bool plain = given.size() <= 128 &&
                     given.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.-") ==
                         std::string::npos;
  if (!plain) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "IDEMPOTENCY_KEY_INVALID",
                          "Idempotency-Key must be 1 to 128 characters of [A-Za-z0-9_:.-]", 400);
  }
  // Scoped to this tool so a code_execute key never collides with it.
  return "codex_exec:" + given;
}

// private_ssh: the owner approves the exact call first (private_ssh_gate.h).
// The first request answers 202 with a pending approval; the caller repeats
// it with `Approval-Id` once a person decided. The approved call goes to
// NyxID's SSH route with the caller's own credential (private_ssh_run.h) and
// answers NyxID's raw SSH response.
http::Response HandlePrivateSsh(const HttpApiDeps& deps, const http::Request& request,
                                const Caller& caller, const CodexExecArgs& args,
                                RequestNote& note) {
  if (deps.approvals == nullptr) {
    return Problem(ManagedError(kTargetNotConfigured,
                                "the private_ssh target is not configured on this aevatar host"),
                   note);
  }
  const std::string approval_id = request.headers.Get("Approval-Id").value_or("");
  if (!approval_id.empty() && !IsApprovalId(approval_id)) {
    return Problem(base::ApiError(absl::StatusCode::kInvalidArgument, "APPROVAL_ID_INVALID",
                                  "Approval-Id must be an approval id", 400),
                   note);
  }
  auto gate = GatePrivateSsh(*deps.approvals, caller.user_id, args, approval_id, base::NowUnixMs());
  if (!gate.ok()) return Problem(gate.status(), note);
  if (!gate->approved) {
    return NoStore(
        Json(202, {{"status", "approval_required"},
                   {"approval_id", gate->approval.id},
                   {"call_digest", gate->approval.call_digest},
                   {"expires_at_ms", gate->approval.expires_at_ms},
                   {"remediation",
                    "a person approves it (aevatar approvals approve ID, or the page /ui); then "
                    "repeat this request with the header Approval-Id: ID"}}));
  }
  auto result = RunPrivateSsh(*deps.nyxid, caller.credential, args);
  if (!result.ok()) return Problem(result.status(), note);
  return Json(200, *result);
}

http::Response HandleCodexExec(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  // Validation happens before any network call.
  auto args = ParseCodexExecArgs(request.body);
  if (!args.ok()) return Problem(args.status(), note);
  if (args->target == CodexTarget::kPrivateSsh) {
    return HandlePrivateSsh(deps, request, *caller, *args, note);
  }
  if (deps.codex == nullptr) return Problem(Disabled(), note);
  auto key = InteractiveKey(request);
  if (!key.ok()) return Problem(key.status(), note);
  auto result = deps.codex->Execute(caller->user_id, *args, *key, note.diagnostic_id, std::nullopt,
                                    caller->allowed_services);
  if (!result.ok()) return Problem(result.status(), note);
  if (absl::Status outcome = ManagedOutcome(*result); !outcome.ok()) {
    // The typed error keeps the runner's terminal fields (its sanitized
    // diagnostic id included) so the failure can be located.
    http::Response response = Problem(outcome, note);
    json body = json::parse(response.body, nullptr, false);
    if (body.is_object()) {
      body["result"] = result->ToJson();
      response.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return response;
  }
  return Json(200, result->ToJson());
}

http::Response HandleEnsureCredential(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (deps.codex == nullptr) return Problem(Disabled(), note);
  auto status = deps.codex->EnsureCredential(*caller, note.diagnostic_id);
  if (!status.ok()) return Problem(status.status(), note);
  return NoStore(Json(200, *status));
}

json DisabledStatus() {
  return {{"status", "disabled"},
          {"execution_ready", false},
          {"execution_readiness_reason", kManagedTargetDisabled},
          {"capability", "codex_exec"},
          {"target", "managed_sandbox"},
          {"capability_class", kCodexCapabilityClass},
          {"rollout_boundary", kCodexRolloutBoundary},
          {"eligibility_mode", "Off"},
          {"remediation",
           "the operator enables managed Codex: aevatar serve --managed-codex allowlist|all"}};
}

http::Response HandleCredentialStatus(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (deps.codex == nullptr) return Json(200, DisabledStatus());
  return Json(200, deps.codex->CredentialStatus(caller->user_id));
}

// GET /api/capabilities/codex_exec/readiness: the same read-only check,
// in the shape of code_execute's readiness.
http::Response HandleCodexReadiness(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  json status =
      deps.codex == nullptr ? DisabledStatus() : deps.codex->CredentialStatus(caller->user_id);
  json out = {{"capability", "codex_exec"},
              {"target", "managed_sandbox"},
              {"ready", status["execution_ready"]},
              {"code", status["execution_readiness_reason"]},
              {"credential_status", status["status"]},
              {"capability_class", status["capability_class"]},
              {"rollout_boundary", status["rollout_boundary"]},
              {"eligibility_mode", status["eligibility_mode"]},
              {"diagnostic_id", note.diagnostic_id}};
  if (status.contains("remediation")) out["remediation"] = status["remediation"];
  return Json(200, out);
}

}  // namespace

void AddCodexRoutes(const AddRoute& add) {
  // managed_sandbox: ManagedCodex::Execute checks a restricted key against the
  // chrono-sandbox route; private_ssh: NyxID's SSH route checks it.
  add("POST", "/api/tools/codex_exec", HandleCodexExec, CallerScope::kExecution);
  add("POST", "/api/managed-codex/credential", HandleEnsureCredential);
  add("GET", "/api/managed-codex/credential", HandleCredentialStatus);
  add("GET", "/api/capabilities/codex_exec/readiness", HandleCodexReadiness);
}

}  // namespace aevatar::orchestrator
