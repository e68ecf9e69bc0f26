#ifndef AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_INTERNAL_H_
#define AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "nlohmann/json.hpp"

// Helpers shared by the workflow definition files. Not part of the API the
// run engine calls; everything here is pure and thread-safe.
namespace aevatar::orchestrator {

inline constexpr char kWorkflowInvalid[] = "WORKFLOW_INVALID";
inline constexpr char kWorkflowArgumentsInvalid[] = "WORKFLOW_ARGUMENTS_INVALID";
inline constexpr char kWorkflowRouteSelectorForbidden[] = "WORKFLOW_ROUTE_SELECTOR_FORBIDDEN";

// InvalidArgument with `api_code` and the detail "<path>: <what>" (just
// `what` when `path` is empty). Callers never put workflow text in `what`.
inline absl::Status WorkflowError(const char* api_code, const std::string& path,
                                  const std::string& what) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, api_code,
                        path.empty() ? what : absl::StrCat(path, ": ", what));
}
inline absl::Status WorkflowInvalid(const std::string& path, const std::string& what) {
  return WorkflowError(kWorkflowInvalid, path, what);
}

// True when every character of `s` is in [A-Za-z0-9_-] and 1 <= size <= max.
inline bool IsPlainName(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// "<parent>.<key>". A key that is not a plain name is shown as "<key>" so a
// detail never carries arbitrary author text.
inline std::string JoinPath(const std::string& parent, const std::string& key) {
  const std::string shown = IsPlainName(key, 64) ? key : "<key>";
  return parent.empty() ? shown : absl::StrCat(parent, ".", shown);
}
inline std::string IndexPath(const std::string& parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

// workflow_id: [a-z0-9-]{1,63}.
inline bool IsValidWorkflowId(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}
// Step id: [a-z0-9_-]{1,63}.
inline bool IsValidStepId(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}
// Input name: [A-Za-z_][A-Za-z0-9_]{0,63}.
inline bool IsValidInputName(const std::string& s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (c == '-') return false;
  }
  return IsPlainName(s, 64);
}
// A step-output field name in an expectation: [a-z_][a-z0-9_]{0,63}.
inline bool IsValidFieldName(const std::string& s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The value of an integer JSON number that fits int64_t; nullopt for any
// other value (including a float and an unsigned number above INT64_MAX,
// which get<int64_t>() would silently wrap).
inline std::optional<int64_t> AsInt64(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

// The step-output fields a ${steps.ID.FIELD} template may name.
inline bool IsTemplateStepField(const std::string& field) {
  return field == "stdout" || field == "stderr" || field == "exit_code" || field == "status" ||
         field == "trimmed_output";
}

// Parses the "inputs" list (null -> none): each {name, type, default?,
// description?}; names unique, not route selectors; a default of the declared
// type. Returns WORKFLOW_INVALID / WORKFLOW_ROUTE_SELECTOR_FORBIDDEN naming
// the path. Defined in workflow_inputs.cc.
absl::StatusOr<std::vector<WorkflowInput>> ParseWorkflowInputs(const nlohmann::json& inputs,
                                                               const std::string& path);
// The canonical form of one input.
nlohmann::json WorkflowInputToJson(const WorkflowInput& input);

// Parses the "triggers" list (null -> none): WORKFLOW_TRIGGER_INVALID naming
// the path. Defined in workflow_triggers.cc, with the canonical form.
absl::StatusOr<std::vector<WorkflowTrigger>> ParseWorkflowTriggers(const nlohmann::json& triggers,
                                                                   const std::string& path);
nlohmann::json WorkflowTriggerToJson(const WorkflowTrigger& trigger);

// Validates a workflow tree (from YAML or JSON) into a definition and
// computes its digest. A "digest" key is accepted (and checked) only when
// `allow_digest`. Defined in workflow_definition.cc.
absl::StatusOr<WorkflowDefinition> ValidateWorkflowTree(const nlohmann::json& tree,
                                                        bool allow_digest);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_WORKFLOW_INTERNAL_H_
