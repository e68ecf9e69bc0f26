#ifndef AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_ARGUMENTS_H_
#define AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_ARGUMENTS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

// What a workflow step's arguments may contain: no route selector anywhere,
// and for code_execute the tool's own argument contract, checked once when
// the workflow is validated (templates allowed) and again after rendering
// (concrete values only). Pure and thread-safe.
namespace aevatar::orchestrator {

// True when `key` names a route selector: route, route_id, user_service_id,
// userservice_id, user_service, service_id, via, nyxid_via, _nyxid_via,
// target_route, route_selector. Case, leading underscores and '-' vs '_' are
// ignored so spelling variants cannot slip through.
bool IsRouteSelectorKey(const std::string& key);

// Walks every object key in `tree` (any depth). Returns
// WORKFLOW_ROUTE_SELECTOR_FORBIDDEN naming the first route-selector key's
// path, WORKFLOW_INVALID when `tree` nests deeper than 32 levels, else OK.
absl::Status RejectRouteSelectors(const nlohmann::json& tree, const std::string& path);

// Validates and normalizes code_execute arguments at definition time:
// keys {language, source, timeout_secs, stdin, env}; language one of
// python|javascript|typescript|bash or a string holding a template; source
// a non-empty string; timeout_secs an integer 1..600 or exactly one template
// (absent or null -> 180, written in); stdin a string; env an object of
// string values with names [A-Za-z_][A-Za-z0-9_]* not starting with NYXID_
// or LD_. Null stdin/env are removed. Template syntax is checked; whether the
// references resolve is the caller's check. `path` is the arguments' path.
// Returns the literal timeout_secs, or nullopt when it is a template; else
// WORKFLOW_INVALID naming the offending path.
absl::StatusOr<std::optional<int>> NormalizeCodeExecuteArguments(nlohmann::json& arguments,
                                                                 const std::string& path);

// Re-validates rendered code_execute arguments (no templates left):
// the same contract with concrete values only, plus timeout_secs * 1000 <
// `step_timeout_ms` so the step deadline observes the executor's timeout.
// Returns WORKFLOW_ARGUMENTS_INVALID naming the offending path, else OK.
absl::Status CheckRenderedCodeExecuteArguments(const nlohmann::json& arguments,
                                               int64_t step_timeout_ms, const std::string& path);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_ARGUMENTS_H_
