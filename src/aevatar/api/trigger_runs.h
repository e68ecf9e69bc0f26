#ifndef AEVATAR_AEVATAR_API_TRIGGER_RUNS_H_
#define AEVATAR_AEVATAR_API_TRIGGER_RUNS_H_

// Unattended workflow runs for aevatar's HTTP API (private to
// src/aevatar/api): the triggers a save declares, and what firing one does.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/api/api_support.h"
#include "aevatar/triggers/trigger_store.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// Makes the stored triggers of the caller's saved workflow those
// `definition` declares: a cron trigger with an unchanged expression and
// each webhook already stored (matched in order) keep their ids, last slot,
// hook id and secret; new webhooks get a hook id and a fresh secret. Returns
// the save answer's "triggers": [{kind, cron} | {kind, hook_id, url,
// secret?}] where `secret` appears only for a webhook created now (shown
// once; GET /api/workflows/{id}/triggers shows it to the owner again).
absl::StatusOr<nlohmann::json> SyncTriggers(const HttpApiDeps& deps, const std::string& owner,
                                            const WorkflowDefinition& definition, int64_t now_ms);

// The owner's view of stored triggers, webhook secrets included.
nlohmann::json TriggerViews(const std::vector<TriggerRecord>& triggers);

// Starts the unattended run `trigger` asks for, with `inputs` (an object):
// the owner's saved workflow on its exact v6 proof and stored catalog (a
// plan without one is refused: never resolved again, no slug), as the
// owner's Vault-backed Agent Key (kind AgentKey, resolved at each outbound
// call). When the start is refused (no Agent Key in the vault, no exact
// proof, the workflow gone, bad inputs) the refusal is recorded as a failed
// run with the typed outcome, a diagnostic id, a log line and an audit
// record, so it is never silently skipped. Returns
// {run_id, status: "running" | "failed", outcome_code?, diagnostic_id?}.
absl::StatusOr<nlohmann::json> FireTrigger(const HttpApiDeps& deps, const TriggerRecord& trigger,
                                           const nlohmann::json& inputs,
                                           const nlohmann::json& trigger_info);

// POST /api/hooks/{id}, GET /api/workflows/{id}/triggers and
// POST /api/triggers/agent-key (triggers_api.cc).
void AddTriggerRoutes(const AddRoute& add);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_TRIGGER_RUNS_H_
