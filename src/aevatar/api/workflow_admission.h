#ifndef AEVATAR_AEVATAR_API_WORKFLOW_ADMISSION_H_
#define AEVATAR_AEVATAR_API_WORKFLOW_ADMISSION_H_

// Admission of workflows for aevatar's HTTP API (private to src/aevatar/api):
// which proof and which authorization catalog a saved, bound or started
// workflow gets, and how NyxID facts read on a request reach the caller's
// runs.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/api/api_support.h"
#include "aevatar/runtime/workflow_store.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// A workflow's admission: the v6 proof sealing the exact route, and the
// authorization catalog built from the NyxID facts that decision was made on.
struct WorkflowAdmission {
  nlohmann::json proof;
  nlohmann::json catalog;
};

// Admits the caller's code_execute route now. `converge` is true only for
// the fresh command admissions (draft-run, save, bind): a caller with write
// authority may then have the route converged first. With `converge` false
// the resolution is read-only (the start of a saved pre-v6 plan).
absl::StatusOr<WorkflowAdmission> AdmitWorkflow(const HttpApiDeps& deps, const Caller& caller,
                                                RequestNote& note, bool converge);

// The admission a saved workflow starts with (StartRuleForSavedPlan): its
// exact v6 proof with the catalog stored at bind time, or, for a
// source-readable caller and a pre-v6 plan, a read-only resolution now.
// A v6 plan bound before catalogs existed gets one from a fresh read of the
// caller's facts when the caller is source-readable, else 409
// AUTHORIZATION_CATALOG_MISSING (bind again).
absl::StatusOr<WorkflowAdmission> AdmissionForSavedPlan(const HttpApiDeps& deps,
                                                        const Caller& caller,
                                                        const SavedWorkflow& saved,
                                                        RequestNote& note);

// Saves `definition` as `caller`'s workflow, admitted now with its route
// converged first (AdmitWorkflow with converge): what POST /api/workflows
// does, and what a skill mount does for each of the skill's workflows.
// Replaces the caller's workflow of the same id, and its triggers
// (SyncTriggers; their view goes to `triggers` when given: it may hold a
// new webhook's secret). Returns the saved record; the admission's errors,
// or the stores'.
absl::StatusOr<SavedWorkflow> SaveAdmittedWorkflow(const HttpApiDeps& deps, const Caller& caller,
                                                   const WorkflowDefinition& definition,
                                                   RequestNote& note,
                                                   nlohmann::json* triggers = nullptr);

// Hands NyxID facts just read for `caller` to the authorization catalogs of
// its live runs (WorkflowRuntime::ObserveNyxidFacts). Best effort: a failure
// is logged with the request's diagnostic id, never returned.
void ObserveFacts(const HttpApiDeps& deps, const Caller& caller,
                  const std::optional<NyxidFacts>& facts, const std::string& diagnostic_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_WORKFLOW_ADMISSION_H_
