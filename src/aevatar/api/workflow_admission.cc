#include "aevatar/api/workflow_admission.h"

#include "aevatar/admission/admission_proof.h"
#include "aevatar/api/trigger_runs.h"
#include "aevatar/runtime/authorization_catalog.h"
#include "aevatar/runtime/workflow_runtime.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/log.h"

namespace aevatar::orchestrator {

void ObserveFacts(const HttpApiDeps& deps, const Caller& caller,
                  const std::optional<NyxidFacts>& facts, const std::string& diagnostic_id) {
  if (deps.runtime == nullptr || !facts || facts->caller.user_id != caller.user_id) return;
  auto changed = deps.runtime->ObserveNyxidFacts(caller.user_id, *facts);
  if (!changed.ok()) {
    base::Log(base::LogLevel::kWarn, "workflow.facts_not_applied", diagnostic_id,
              {{"diagnostic_id", diagnostic_id}, {"code", base::ApiCode(changed.status())}});
  } else if (*changed > 0) {
    base::Log(base::LogLevel::kInfo, "workflow.grants_revoked", diagnostic_id,
              {{"diagnostic_id", diagnostic_id}, {"runs", *changed}});
  }
}

absl::StatusOr<WorkflowAdmission> AdmitWorkflow(const HttpApiDeps& deps, const Caller& caller,
                                                RequestNote& note, bool converge) {
  std::optional<NyxidFacts> facts;
  auto route = AdmitCodeExecutionRoute(*deps.nyxid, caller, deps.chrono_catalog_id, converge,
                                       note.diagnostic_id, &facts);
  ObserveFacts(deps, caller, facts, note.diagnostic_id);
  if (!route.ok()) return route.status();
  if (!facts) {
    return base::ApiError(absl::StatusCode::kInternal, "ADMISSION_FACTS_MISSING",
                          "the admission read no NyxID facts");
  }
  const int64_t now = base::NowUnixMs();
  auto catalog = CatalogFromFacts(*facts, *route, now);
  if (!catalog.ok()) return catalog.status();
  return WorkflowAdmission{MakeAdmissionProof(*route, now), std::move(*catalog)};
}

absl::StatusOr<SavedWorkflow> SaveAdmittedWorkflow(const HttpApiDeps& deps, const Caller& caller,
                                                   const WorkflowDefinition& definition,
                                                   RequestNote& note, nlohmann::json* triggers) {
  auto admission = AdmitWorkflow(deps, caller, note, /*converge=*/true);
  if (!admission.ok()) return admission.status();
  SavedWorkflow saved{definition.workflow_id, caller.user_id,   WorkflowToJson(definition),
                      definition.digest,      admission->proof, base::NowUnixMs(),
                      admission->catalog};
  if (absl::Status st = deps.workflows->SaveWorkflow(saved); !st.ok()) return st;
  auto synced = SyncTriggers(deps, caller.user_id, definition, saved.saved_at_ms);
  if (!synced.ok()) return synced.status();
  if (triggers != nullptr) *triggers = *std::move(synced);
  return saved;
}

absl::StatusOr<WorkflowAdmission> AdmissionForSavedPlan(const HttpApiDeps& deps,
                                                        const Caller& caller,
                                                        const SavedWorkflow& saved,
                                                        RequestNote& note) {
  auto rule = StartRuleForSavedPlan(saved.admission_proof, caller.kind);
  if (!rule.ok()) return rule.status();
  // Runtime never writes routes: a pre-v6 plan is resolved read-only.
  if (*rule == PlanStart::kInteractiveResolution) {
    return AdmitWorkflow(deps, caller, note, /*converge=*/false);
  }
  if (!saved.authorization_catalog.is_null()) {
    return WorkflowAdmission{saved.admission_proof, saved.authorization_catalog};
  }
  if (caller.kind != CredentialKind::kHumanBearer) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "AUTHORIZATION_CATALOG_MISSING",
                          "this workflow was bound before authorization catalogs; bind it again");
  }
  auto route = SealedRoute(saved.admission_proof);
  if (!route.ok()) return route.status();
  auto facts = ReadNyxidFacts(*deps.nyxid, caller.credential);
  if (!facts.ok()) return facts.status();
  ObserveFacts(deps, caller, *facts, note.diagnostic_id);
  auto catalog = CatalogFromFacts(*facts, *route, base::NowUnixMs());
  if (!catalog.ok()) return catalog.status();
  return WorkflowAdmission{saved.admission_proof, std::move(*catalog)};
}

}  // namespace aevatar::orchestrator
