#ifndef AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_EXPECT_H_
#define AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_EXPECT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

// A step's evaluation contract (`expect`): its authored form and its
// evaluation against one step output. Pure and thread-safe.
namespace aevatar::orchestrator {

struct ExpectationResult {
  bool passed = true;
  // One line per failed check, e.g. "trimmed stdout differs". A failure
  // names the check and the field, never the step's output.
  std::vector<std::string> failures;
};

// Evaluates every present check of `expect` against `step_output` (an
// object such as {stdout, stderr, exit_code, status, ...}). A missing field
// fails its check. Never throws.
ExpectationResult EvaluateExpectation(const StepExpectation& expect,
                                      const nlohmann::json& step_output);

// Parses the authored form {equals: {FIELD: scalar}, trimmed_output_equals:
// string, exit_code: integer, non_empty: [FIELD]}; at least one check must be
// present, FIELD matches [a-z_][a-z0-9_]{0,63}. Returns WORKFLOW_INVALID
// naming the offending path under `path`.
absl::StatusOr<StepExpectation> ParseExpectation(const nlohmann::json& json,
                                                 const std::string& path);

// The canonical form ParseExpectation accepts; absent checks are omitted.
nlohmann::json ExpectationToJson(const StepExpectation& expect);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_EXPECT_H_
