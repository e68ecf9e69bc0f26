#ifndef AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_DEFINITION_H_
#define AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_DEFINITION_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// Theory of operation: the workflow definition layer.
//
// A workflow is authored as YAML (docs/workflows.md), converted to a JSON
// tree (workflow_parse.cc) and validated once into a WorkflowDefinition. The
// same validation accepts the canonical JSON form (WorkflowToJson), which is
// what gets stored and digested: keys sorted, every default filled in
// (timeout_secs, timeout_ms), absent optional fields omitted. Two YAML files
// that differ only in key order, quoting style, comments or explicitly written
// defaults therefore have the same digest.
//
// Step arguments may hold ${inputs.NAME} and ${steps.ID.FIELD} templates;
// they stay unrendered in the definition and are rendered per run by
// RenderStepArguments (workflow_template.h). A step never carries a route
// selector: the executor route is admitted by aevatar, never authored by the
// caller (spec: "code_execute is compiled as an external capability with no
// caller-authored route selector").
//
// Pure code: no I/O, no clock, no global state. Every function is
// thread-safe and never throws. Every error is a typed base::ApiError whose
// detail names the offending path (e.g. "steps[1].arguments.timeout_secs")
// and never echoes workflow text or input values.
namespace aevatar::orchestrator {

// Upper bound on a workflow's YAML text.
inline constexpr size_t kMaxWorkflowYamlBytes = 256 * 1024;
inline constexpr size_t kMaxWorkflowSteps = 64;
inline constexpr size_t kMaxWorkflowInputs = 64;
// Upper bound on any description and on a string input's value.
inline constexpr size_t kMaxWorkflowDescriptionBytes = 4096;
inline constexpr size_t kMaxStringInputBytes = 64 * 1024;
inline constexpr int64_t kMaxStepTimeoutMs = 3'600'000;
// code_execute's timeout_secs range and default, as the tool catalog states.
inline constexpr int kCodeExecuteDefaultTimeoutSecs = 180;
inline constexpr int kCodeExecuteMaxTimeoutSecs = 600;
// A code_execute step's default timeout_ms is timeout_secs * 1000 plus this
// margin, so the step deadline always observes the executor's own timeout.
inline constexpr int64_t kCodeExecuteStepMarginMs = 60'000;
// codex_exec's default step timeout (the canary's 180 s < 300 s < 315 s <
// 330 s < 360 s deadline chain).
inline constexpr int64_t kCodexExecDefaultTimeoutMs = 360'000;

// One typed workflow input.
struct WorkflowInput {
  std::string name;  // [A-Za-z_][A-Za-z0-9_]{0,63}, unique within the workflow
  std::string type;  // "string" | "integer" | "boolean"
  // When present, a JSON value of `type` (string, integer, boolean).
  std::optional<nlohmann::json> default_value;
  std::string description;
};

// A step's evaluation contract. Every present check must hold.
struct StepExpectation {
  // field -> exact JSON value, e.g. {"status": "succeeded", "exit_code": 0}.
  std::map<std::string, nlohmann::json> equals;
  // The step's stdout with leading and trailing ASCII whitespace removed must
  // equal this.
  std::optional<std::string> trimmed_output_equals;
  std::optional<int> exit_code;
  // Fields that must be present, non-null and, for strings/arrays/objects,
  // non-empty.
  std::vector<std::string> non_empty;
};

// One ordered tool call.
struct WorkflowStep {
  std::string id;    // [a-z0-9_-]{1,63}, unique within the workflow
  std::string tool;  // "code_execute" | "codex_exec"
  // The tool's arguments, possibly holding unrendered templates. For
  // code_execute, timeout_secs is always present (the default is filled in).
  nlohmann::json arguments;
  int64_t timeout_ms = 0;  // 1..kMaxStepTimeoutMs, always filled in
  std::optional<StepExpectation> expect;
};

// How a saved workflow may start unattended (docs/workflows.md, Triggers).
struct WorkflowTrigger {
  std::string kind;  // "cron" | "webhook"
  // For "cron": five fields (cron_schedule.h), normalised to single spaces.
  std::string cron;
};
inline constexpr size_t kMaxWorkflowTriggers = 8;

struct WorkflowDefinition {
  std::string workflow_id;  // [a-z0-9-]{1,63}
  std::string description;
  std::vector<WorkflowInput> inputs;
  std::vector<WorkflowStep> steps;  // 1..kMaxWorkflowSteps, in run order
  // 0..kMaxWorkflowTriggers, in the order written; in the canonical form
  // (and so the digest) only when there are any.
  std::vector<WorkflowTrigger> triggers;
  // "sha256:<64 hex>" of the canonical JSON form without the digest itself.
  std::string digest;
};

// Parses and validates a YAML workflow (format: docs/workflows.md).
// Returns the definition with every default filled in and its digest set, or
// InvalidArgument with api code WORKFLOW_INVALID (malformed YAML or any
// schema violation) or WORKFLOW_ROUTE_SELECTOR_FORBIDDEN (a key such as
// route, route_id, user_service_id, service_id, via, target_route or
// _nyxid_via anywhere in the workflow, or an input with such a name), or
// WORKFLOW_TRIGGER_INVALID (a `triggers:` entry that is not `cron: EXPR`
// with a valid five-field expression or `webhook: {}`).
absl::StatusOr<WorkflowDefinition> ParseWorkflowYaml(const std::string& yaml_text);

// Parses one YAML document into JSON with the bounds of ParseWorkflowYaml
// (size, depth, node count, one document, no duplicate keys; scalars typed by
// the YAML 1.2 core schema). For other YAML the workflow module's callers
// read (a skill's manifest). InvalidArgument WORKFLOW_INVALID otherwise; the
// detail gives a position, never the text.
absl::StatusOr<nlohmann::json> ParseYamlDocument(const std::string& yaml_text);

// The canonical JSON form: {workflow_id, description, inputs, steps, digest}
// with defaults filled in and absent optional fields omitted ("digest" is
// omitted when def.digest is empty). WorkflowFromJson(WorkflowToJson(d))
// reproduces `d` for any validated `d`.
nlohmann::json WorkflowToJson(const WorkflowDefinition& def);

// Validates a workflow in the JSON shape WorkflowToJson produces (defaults
// may be omitted, as in YAML) with the same rules and errors as
// ParseWorkflowYaml. A present "digest" must match the content, else
// WORKFLOW_INVALID; the returned digest is always recomputed.
absl::StatusOr<WorkflowDefinition> WorkflowFromJson(const nlohmann::json& json);

// Binds a run's inputs: `provided` (an object, or null for none) merged over
// the declared defaults. Strings are accepted for typed inputs as a CLI
// "K=V" delivers them: "130" -> 130 for integer, "true"/"false" for boolean.
// Returns an object holding every declared input, or InvalidArgument with
// WORKFLOW_INPUT_UNKNOWN (a name not declared), WORKFLOW_INPUT_INVALID (wrong
// type, unconvertible string, oversized string, `provided` not an object) or
// WORKFLOW_INPUT_MISSING (no value and no default). A null value counts as
// not provided.
absl::StatusOr<nlohmann::json> BindInputs(const WorkflowDefinition& def,
                                          const nlohmann::json& provided);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_DEFINITION_H_
