#ifndef AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_
#define AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// A runtime environment the executor offers (docs/chrono-sandbox.md,
// "Runtime environments"): what aevatar advertises in GET /api/tools and in
// code_execute readiness. The executor's own list is the authority.
struct RuntimeOffer {
  std::string name;
  std::string language;  // python | javascript | typescript | bash
};

// The tools aevatar offers agents, as GET /api/tools returns them:
// {"tools": [{name, capability_class, description, input_schema, approval}]}.
// Descriptions carry the spec's selection rules, so an agent chooses the verb
// from the user's intent (exact source -> code_execute; a natural-language
// task -> codex_exec) and never from an approval label or output fields.
// code_execute lists `runtimes` (names and languages) and takes `runtime`.
nlohmann::json ToolCatalogJson(const std::vector<RuntimeOffer>& runtimes = {});

// `runtimes` as JSON: [{name, language}], for the tool list and readiness.
nlohmann::json RuntimeOffersJson(const std::vector<RuntimeOffer>& runtimes);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_TOOL_CATALOG_H_
