#ifndef AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_
#define AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_

#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// The tools aevatar offers agents, as GET /api/tools returns them:
// {"tools": [{name, capability_class, description, input_schema, approval}]}.
// Descriptions carry the spec's selection rules, so an agent chooses the verb
// from the user's intent (exact source -> code_execute; a natural-language
// task -> codex_exec) and never from an approval label or output fields.
nlohmann::json ToolCatalogJson();

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_
