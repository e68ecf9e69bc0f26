// The trigger routes of aevatar's HTTP API: webhook deliveries, the owner's
// view of a workflow's triggers, and the Vault-backed Agent Key that
// unattended runs execute with.
#include "absl/strings/str_cat.h"
#include "aevatar/api/trigger_runs.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/triggers/webhook_signature.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// How long a delivery's signature is remembered: past the replay window
// either way, so any replay of it is refused as replayed or as stale.
constexpr int64_t kDeliveryMemoryMs = 2 * kWebhookReplayWindowSeconds * 1000 + 60'000;
constexpr size_t kMaxHookBodyBytes = 64 * 1024;

// The delivery's inputs: an empty body, or a JSON object whose optional
// "inputs" member (an object) binds the workflow's inputs.
absl::StatusOr<json> HookInputs(const std::string& body) {
  if (body.empty()) return json::object();
  if (body.size() > kMaxHookBodyBytes) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "WEBHOOK_BODY_TOO_LARGE",
                          "a webhook body is at most 64 KiB");
  }
  auto parsed = base::ParseJsonObject(body);
  if (!parsed.ok()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "MALFORMED_JSON",
                          "the body must be empty or a JSON object");
  }
  if (!parsed->contains("inputs") || (*parsed)["inputs"].is_null()) return json::object();
  auto inputs = base::RequiredObject(*parsed, "inputs");
  if (!inputs.ok()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "INVALID_FIELD_TYPE",
                          std::string(inputs.status().message()));
  }
  return **inputs;
}

// POST /api/hooks/{id}: no bearer; the signature is the credential. The
// header is checked (format, window) before the hook is looked up, so a
// stranger learns nothing about which hooks exist beyond a 404 for an
// unknown id with a well-formed, fresh signature.
http::Response HandleHook(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  const int64_t now_ms = base::NowUnixMs();
  auto signature = ParseWebhookSignature(request.headers.Get(kWebhookSignatureHeader).value_or(""),
                                         now_ms / 1000);
  if (!signature.ok()) return Problem(signature.status(), note);
  auto hook = deps.triggers->HookById(request.path_params.at("id"));
  if (!hook.ok()) return Problem(hook.status(), note);
  if (!hook->has_value()) {
    return Problem(
        base::ApiError(absl::StatusCode::kNotFound, "WEBHOOK_NOT_FOUND", "no such webhook"), note);
  }
  const TriggerRecord& trigger = **hook;
  auto delivery_key = VerifyWebhookSignature(*signature, trigger.secret, request.body);
  if (!delivery_key.ok()) return Problem(delivery_key.status(), note);
  note.credential_kind = "WebhookSignature";
  // A body refused here is refused before the delivery is remembered.
  auto inputs = HookInputs(request.body);
  if (!inputs.ok()) return Problem(inputs.status(), note);
  // Keyed on (t, the MAC that matched), not the header text: a replay
  // re-spelled (another scheme appended, spaces, order) is still a replay.
  const std::string delivery_digest = base::Sha256Hex(*delivery_key);
  auto first =
      deps.triggers->ClaimDelivery(trigger.hook_id, delivery_digest, now_ms, kDeliveryMemoryMs);
  if (!first.ok()) return Problem(first.status(), note);
  if (!*first) {
    return Problem(base::ApiError(absl::StatusCode::kAlreadyExists, "WEBHOOK_REPLAYED",
                                  "this delivery was already received", 409),
                   note);
  }
  auto fired = FireTrigger(deps, trigger, *inputs,
                           {{"kind", "webhook"}, {"trigger_id", trigger.trigger_id}});
  if (!fired.ok()) {
    // Nothing was started or recorded: forget the delivery so the sender's
    // retry fires it instead of being refused as a replay.
    if (absl::Status released = deps.triggers->ReleaseDelivery(trigger.hook_id, delivery_digest);
        !released.ok()) {
      base::Log(base::LogLevel::kWarn, "trigger.delivery_release_failed", note.diagnostic_id,
                {{"trigger_id", trigger.trigger_id}, {"code", base::ApiCode(released)}});
    }
    return Problem(fired.status(), note);
  }
  return Json(202, *fired);
}

// GET /api/workflows/{id}/triggers: the owner's triggers, secrets included.
http::Response HandleListTriggers(const HttpApiDeps& deps, http::Request& request,
                                  RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto saved = deps.workflows->GetWorkflow(caller->user_id, request.path_params.at("id"));
  if (!saved.ok()) return Problem(saved.status(), note);
  auto triggers = deps.triggers->TriggersOf(caller->user_id, saved->workflow_id);
  if (!triggers.ok()) return Problem(triggers.status(), note);
  return NoStore(
      Json(200, {{"workflow_id", saved->workflow_id}, {"triggers", TriggerViews(*triggers)}}));
}

// POST /api/triggers/agent-key: makes sure the vault holds the caller's
// Agent Key for unattended runs (a human login; EnsureVaultAgentKey).
http::Response HandleEnsureAgentKey(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (deps.agent_key_vault == nullptr) {
    return Problem(
        base::ApiError(absl::StatusCode::kFailedPrecondition, "unattended_agent_key_missing",
                       "this aevatar has no vault of Agent Keys"),
        note);
  }
  auto action = EnsureVaultAgentKey(*deps.nyxid, *deps.agent_key_vault, *caller,
                                    deps.chrono_catalog_id, base::NowUnixMs(), note.diagnostic_id);
  if (!action.ok()) return Problem(action.status(), note);
  return NoStore(Json(200, {{"action", *action}, {"credential_kind", "AgentKey"}}));
}

}  // namespace

void AddTriggerRoutes(const AddRoute& add) {
  add("POST", "/api/hooks/{id}", HandleHook);
  add("GET", "/api/workflows/{id}/triggers", HandleListTriggers);
  add("POST", "/api/triggers/agent-key", HandleEnsureAgentKey);
}

}  // namespace aevatar::orchestrator
