// Saving a workflow's triggers and starting its unattended runs.
#include "aevatar/api/trigger_runs.h"

#include "absl/strings/ascii.h"
#include "aevatar/admission/admission_proof.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/codex/credential_vault.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "aevatar/runtime/workflow_store.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"
#include "http/problem.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// A webhook secret: 32 random bytes, shown as text.
std::string NewHookSecret() { return "whsec_" + base::HexEncode(base::RandomBytes(32)); }

json TriggerView(const TriggerRecord& t, bool with_secret) {
  if (t.kind == "cron") return {{"kind", "cron"}, {"cron", t.cron}};
  json view = {{"kind", "webhook"}, {"hook_id", t.hook_id}, {"url", "/api/hooks/" + t.hook_id}};
  if (with_secret) view["secret"] = t.secret;
  return view;
}

// The run a start needs, or the typed reason it cannot begin.
struct UnattendedStart {
  WorkflowDefinition definition;
  json inputs;
  json proof;
  json catalog;
  std::string route_id;  // the exact UserService the proof seals
};

absl::StatusOr<UnattendedStart> PrepareStart(const HttpApiDeps& deps, const TriggerRecord& trigger,
                                             const json& inputs) {
  auto saved = deps.workflows->GetWorkflow(trigger.owner, trigger.workflow_id);
  if (!saved.ok()) return saved.status();
  auto definition = WorkflowFromJson(saved->definition);
  if (!definition.ok()) return definition.status();
  // An Agent Key start: only an exact v6 proof (never a resolution now).
  auto rule = StartRuleForSavedPlan(saved->admission_proof, CredentialKind::kAgentKey);
  if (!rule.ok()) return rule.status();
  if (saved->authorization_catalog.is_null()) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "AUTHORIZATION_CATALOG_MISSING",
                          "this workflow was bound before authorization catalogs; bind it again");
  }
  auto route = SealedRoute(saved->admission_proof);
  if (!route.ok()) return route.status();
  auto bound = BindInputs(*definition, inputs);
  if (!bound.ok()) return bound.status();
  return UnattendedStart{*std::move(definition), *std::move(bound), saved->admission_proof,
                         saved->authorization_catalog, route->user_service_id};
}

// The owner's Vault-backed key must exist and be the one NyxID restricts to
// the route the proof seals.
absl::Status CheckVaultKey(const HttpApiDeps& deps, const std::string& owner,
                           const std::string& route_id) {
  if (deps.agent_key_vault == nullptr) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition,
                          WorkflowRuntime::kAgentKeyMissingCode,
                          "this aevatar has no vault of Agent Keys");
  }
  auto held = deps.agent_key_vault->Load(owner);
  if (!held.ok()) return held.status();
  if (!held->has_value()) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition,
                          WorkflowRuntime::kAgentKeyMissingCode,
                          "the owner has no Agent Key in the vault: POST /api/triggers/agent-key");
  }
  if ((*held)->chrono_route_id != route_id) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition,
                          "unattended_agent_key_route_mismatch",
                          "the vault's Agent Key is restricted to another route: ensure it again");
  }
  return absl::OkStatus();
}

// The records `definition` declares, given the stored ones (see SyncTriggers);
// fresh[i] says whether next[i] is created now.
std::vector<TriggerRecord> PlanTriggers(const std::vector<TriggerRecord>& stored,
                                        const std::string& owner,
                                        const WorkflowDefinition& definition, int64_t now_ms,
                                        std::vector<bool>& fresh) {
  std::vector<TriggerRecord> old_hooks;
  for (const TriggerRecord& t : stored) {
    if (t.kind == "webhook") old_hooks.push_back(t);
  }
  std::vector<TriggerRecord> next;
  fresh.clear();
  size_t hooks_seen = 0;
  for (const WorkflowTrigger& declared : definition.triggers) {
    TriggerRecord record;
    bool created = true;
    if (declared.kind == "cron") {
      for (const TriggerRecord& t : stored) {
        if (t.kind == "cron" && t.cron == declared.cron) {
          bool taken = false;
          for (const TriggerRecord& n : next) taken = taken || n.trigger_id == t.trigger_id;
          if (taken) continue;
          record = t;
          created = false;
          break;
        }
      }
    } else if (hooks_seen < old_hooks.size()) {
      record = old_hooks[hooks_seen];
      created = false;
    }
    if (declared.kind == "webhook") ++hooks_seen;
    if (created) {
      record.trigger_id = base::RandomId("trg_");
      record.owner = owner;
      record.workflow_id = definition.workflow_id;
      record.kind = declared.kind;
      record.cron = declared.cron;
      if (declared.kind == "webhook") {
        record.hook_id = base::RandomId("hook_");
        record.secret = NewHookSecret();
      }
      record.created_at_ms = now_ms;
    }
    next.push_back(record);
    fresh.push_back(created);
  }
  return next;
}

}  // namespace

absl::StatusOr<json> SyncTriggers(const HttpApiDeps& deps, const std::string& owner,
                                  const WorkflowDefinition& definition, int64_t now_ms) {
  json views = json::array();
  if (deps.triggers == nullptr) return views;
  // Read, match and replace in one store transaction: two saves at once
  // apply in turn, so neither drops a webhook whose secret the other showed.
  std::vector<bool> fresh;
  auto next = deps.triggers->ReconcileTriggers(
      owner, definition.workflow_id, [&](const std::vector<TriggerRecord>& stored) {
        return PlanTriggers(stored, owner, definition, now_ms, fresh);
      });
  if (!next.ok()) return next.status();
  for (size_t i = 0; i < next->size(); ++i) views.push_back(TriggerView((*next)[i], fresh[i]));
  return views;
}

json TriggerViews(const std::vector<TriggerRecord>& triggers) {
  json views = json::array();
  for (const TriggerRecord& t : triggers) views.push_back(TriggerView(t, /*with_secret=*/true));
  return views;
}

absl::StatusOr<json> FireTrigger(const HttpApiDeps& deps, const TriggerRecord& trigger,
                                 const json& inputs, const json& trigger_info) {
  absl::StatusOr<std::string> run_id;
  auto start = PrepareStart(deps, trigger, inputs);
  absl::Status refused = start.status();
  if (start.ok()) refused = CheckVaultKey(deps, trigger.owner, start->route_id);
  if (refused.ok()) {
    run_id =
        deps.runtime->StartVaultKeyRun(trigger.owner, {start->route_id}, start->definition,
                                       start->inputs, start->proof, start->catalog, trigger_info);
    if (run_id.ok()) {
      base::Log(base::LogLevel::kInfo, "trigger.run_started", *run_id,
                {{"trigger_id", trigger.trigger_id}, {"kind", trigger.kind}});
      return json{{"run_id", *run_id}, {"status", "running"}};
    }
    refused = run_id.status();
  }
  // Never silently skipped: a failed run the owner can find, a log line and
  // an audit record, all with one diagnostic id.
  const std::string diagnostic_id = http::NewDiagnosticId();
  const std::string code = absl::AsciiStrToLower(base::ApiCode(refused));
  base::Log(base::LogLevel::kWarn, "trigger.start_failed", trigger.trigger_id,
            {{"diagnostic_id", diagnostic_id},
             {"trigger_id", trigger.trigger_id},
             {"kind", trigger.kind},
             {"code", code}});
  run_id = deps.runtime->RecordFailedStart(trigger.owner, trigger.workflow_id, code, diagnostic_id,
                                           trigger_info);
  if (!run_id.ok()) return run_id.status();
  AuditRecord record;
  record.kind = "trigger.start_failed";
  record.run_id = *run_id;
  record.workflow_id = trigger.workflow_id;
  record.correlation_id = trigger.trigger_id;
  record.fact = {{"outcome_code", code},
                 {"diagnostic_id", diagnostic_id},
                 {"credential_kind", "AgentKey"},
                 {"trigger", trigger_info}};
  record.occurred_at_ms = base::NowUnixMs();
  if (auto appended = deps.audit->Append(record); !appended.ok()) return appended.status();
  return json{{"run_id", *run_id},
              {"status", "failed"},
              {"outcome_code", code},
              {"diagnostic_id", diagnostic_id}};
}

}  // namespace aevatar::orchestrator
