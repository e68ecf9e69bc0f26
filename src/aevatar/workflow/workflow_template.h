#ifndef AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_TEMPLATE_H_
#define AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_TEMPLATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/workflow/workflow_definition.h"
#include "nlohmann/json.hpp"

// Templates in step arguments.
//
// Every string value inside a step's arguments (at any depth; object keys
// are never templated) is scanned for ${...}. Two references exist:
//   ${inputs.NAME}        a bound workflow input
//   ${inputs.NAME.MEMBER} a string member of an input that holds JSON object
//                         text (e.g. a prompt of {"service","principal"})
//   ${steps.ID.FIELD}     an EARLIER step's output; FIELD is one of stdout,
//                         stderr, exit_code, status, trimmed_output
// Spaces just inside the braces are ignored. "$${" is a literal "${" (so a
// Bash "${HOME}" is written "$${HOME}"); any other "${" must form a valid
// reference. A string that is exactly one template takes the referenced
// value's JSON type; otherwise values are substituted as text (a string as
// is, a number in JSON notation, true/false, null as nothing).
namespace aevatar::orchestrator {

// One ${...} reference.
struct TemplateRef {
  enum class Kind { kInput, kStepOutput };
  Kind kind = Kind::kInput;
  std::string name;   // input name, or step id
  std::string field;  // step-output field; for an input its JSON member, or empty
};

// A piece of a scanned string: literal text, or one reference.
struct TemplatePiece {
  std::string literal;
  std::optional<TemplateRef> ref;
};

// Scans `text` into pieces (adjacent literals merged, "$${" unescaped).
// Returns WORKFLOW_INVALID at `path` for an unterminated "${" or a reference
// that is not ${inputs.NAME} or ${steps.ID.FIELD} with a known FIELD.
absl::StatusOr<std::vector<TemplatePiece>> ParseTemplateString(const std::string& text,
                                                               const std::string& path);

// True when `pieces` is exactly one reference with no surrounding text.
bool IsSingleTemplate(const std::vector<TemplatePiece>& pieces);

// Renders `step.arguments` for one run. `inputs` is BindInputs' result;
// `step_outputs` maps an earlier step id -> {stdout, stderr, exit_code,
// status, trimmed_output} (trimmed_output, when absent, is computed from
// stdout). For code_execute the rendered arguments are then re-checked
// (language one of python|javascript|typescript|bash, non-empty source,
// timeout_secs an integer 1..600 below the step's timeout_ms, string stdin,
// env of strings). Returns the rendered arguments, or InvalidArgument with
// WORKFLOW_ARGUMENTS_INVALID (a reference with no bound value, rendered text
// that is not valid UTF-8, or a rendered value breaking the tool contract) or WORKFLOW_INVALID
// (malformed template, only for a step that did not come from validation). Details name the step
// and argument path, never a value.
absl::StatusOr<nlohmann::json> RenderStepArguments(const WorkflowStep& step,
                                                   const nlohmann::json& inputs,
                                                   const nlohmann::json& step_outputs);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_TEMPLATE_H_
