// Workflow YAML as a caller submits it (POST /api/workflows, draft runs).
// Properties: no crash, exception or hang (yaml-cpp's exceptions are the
// parser's to catch); a definition that validates has the canonical JSON
// round trip the digest depends on: WorkflowFromJson(WorkflowToJson(d))
// validates to the same canonical form and the same digest.
#include "aevatar/workflow/workflow_definition.h"
#include "fuzz_check.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto definition = orchestrator::ParseWorkflowYaml(std::string(fuzz::AsText(data, size)));
  if (!definition.ok()) return 0;
  FUZZ_CHECK(!definition->steps.empty());
  FUZZ_CHECK(definition->digest.rfind("sha256:", 0) == 0);
  const nlohmann::json canonical = orchestrator::WorkflowToJson(*definition);
  auto again = orchestrator::WorkflowFromJson(canonical);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->digest == definition->digest);
  FUZZ_CHECK(orchestrator::WorkflowToJson(*again) == canonical);
  return 0;
}
