// Typed workflow inputs: their declaration in a workflow and their binding
// for one run.
#include <set>

#include "absl/strings/numbers.h"
#include "aevatar/workflow/workflow_arguments.h"
#include "aevatar/workflow/workflow_definition.h"
#include "aevatar/workflow/workflow_internal.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kInputUnknown[] = "WORKFLOW_INPUT_UNKNOWN";
constexpr char kInputInvalid[] = "WORKFLOW_INPUT_INVALID";
constexpr char kInputMissing[] = "WORKFLOW_INPUT_MISSING";

bool IsInputType(const std::string& type) {
  return type == "string" || type == "integer" || type == "boolean";
}

// Strict decimal: an optional sign and digits only (no spaces, no "0x").
std::optional<int64_t> ParseDecimal(const std::string& text) {
  const size_t start = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (start >= text.size()) return std::nullopt;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

// `value` as a JSON value of `type`; strings convert when `convert_strings`
// (CLI "K=V" values). nullopt when it does not fit.
std::optional<nlohmann::json> Coerce(const std::string& type, const nlohmann::json& value,
                                     bool convert_strings) {
  if (type == "string") {
    if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxStringInputBytes) {
      return std::nullopt;
    }
    return value;
  }
  if (type == "integer") {
    if (std::optional<int64_t> n = AsInt64(value)) return nlohmann::json(*n);
    if (convert_strings && value.is_string()) {
      if (std::optional<int64_t> n = ParseDecimal(value.get<std::string>())) {
        return nlohmann::json(*n);
      }
    }
    return std::nullopt;
  }
  if (value.is_boolean()) return value;
  if (convert_strings && value.is_string()) {
    if (value == "true") return nlohmann::json(true);
    if (value == "false") return nlohmann::json(false);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<WorkflowInput>> ParseWorkflowInputs(const nlohmann::json& inputs,
                                                               const std::string& path) {
  std::vector<WorkflowInput> out;
  if (inputs.is_null()) return out;
  if (!inputs.is_array()) return WorkflowInvalid(path, "must be a list");
  if (inputs.size() > kMaxWorkflowInputs) {
    return WorkflowInvalid(path, absl::StrCat("at most ", kMaxWorkflowInputs, " inputs"));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string item_path = IndexPath(path, i);
    const nlohmann::json& item = inputs[i];
    if (!item.is_object()) return WorkflowInvalid(item_path, "must be a mapping");
    for (const auto& [key, value] : item.items()) {
      if (key != "name" && key != "type" && key != "default" && key != "description") {
        return WorkflowInvalid(JoinPath(item_path, key), "unknown field");
      }
    }
    WorkflowInput input;
    auto name = item.find("name");
    if (name == item.end() || !name->is_string() || !IsValidInputName(name->get<std::string>())) {
      return WorkflowInvalid(JoinPath(item_path, "name"),
                             "required, matching [A-Za-z_][A-Za-z0-9_]{0,63}");
    }
    input.name = name->get<std::string>();
    if (IsRouteSelectorKey(input.name)) {
      return WorkflowError(kWorkflowRouteSelectorForbidden, JoinPath(item_path, "name"),
                           "an input may not carry a route selector");
    }
    if (!names.insert(input.name).second) {
      return WorkflowInvalid(JoinPath(item_path, "name"), "duplicate input name");
    }
    auto type = item.find("type");
    if (type == item.end() || !type->is_string() || !IsInputType(type->get<std::string>())) {
      return WorkflowInvalid(JoinPath(item_path, "type"),
                             "required, one of string, integer, boolean");
    }
    input.type = type->get<std::string>();
    if (auto value = item.find("default"); value != item.end()) {
      // YAML "130" (quoted) is a string, so it does not fit an integer input.
      std::optional<nlohmann::json> coerced = Coerce(input.type, *value, false);
      if (!coerced) {
        return WorkflowInvalid(JoinPath(item_path, "default"),
                               absl::StrCat("must be a value of type ", input.type));
      }
      input.default_value = *std::move(coerced);
    }
    if (auto text = item.find("description"); text != item.end() && !text->is_null()) {
      if (!text->is_string() ||
          text->get_ref<const std::string&>().size() > kMaxWorkflowDescriptionBytes) {
        return WorkflowInvalid(JoinPath(item_path, "description"),
                               "must be a string of at most 4096 bytes");
      }
      input.description = text->get<std::string>();
    }
    out.push_back(std::move(input));
  }
  return out;
}

nlohmann::json WorkflowInputToJson(const WorkflowInput& input) {
  nlohmann::json out = {
      {"name", input.name}, {"type", input.type}, {"description", input.description}};
  if (input.default_value) out["default"] = *input.default_value;
  return out;
}

absl::StatusOr<nlohmann::json> BindInputs(const WorkflowDefinition& def,
                                          const nlohmann::json& provided) {
  if (!provided.is_null() && !provided.is_object()) {
    return WorkflowError(kInputInvalid, "inputs", "must be a mapping of name to value");
  }
  std::set<std::string> declared;
  for (const WorkflowInput& input : def.inputs) declared.insert(input.name);
  if (provided.is_object()) {
    for (const auto& [name, value] : provided.items()) {
      if (!declared.contains(name)) {
        return WorkflowError(kInputUnknown, JoinPath("inputs", name),
                             "not declared by this workflow");
      }
    }
  }
  nlohmann::json bound = nlohmann::json::object();
  for (const WorkflowInput& input : def.inputs) {
    const std::string path = JoinPath("inputs", input.name);
    const nlohmann::json* value = nullptr;
    if (provided.is_object()) {
      if (auto it = provided.find(input.name); it != provided.end() && !it->is_null()) {
        value = &*it;
      }
    }
    if (value == nullptr) {
      if (!input.default_value) return WorkflowError(kInputMissing, path, "required, no default");
      bound[input.name] = *input.default_value;
      continue;
    }
    std::optional<nlohmann::json> coerced = Coerce(input.type, *value, /*convert_strings=*/true);
    if (!coerced) {
      return WorkflowError(kInputInvalid, path, absl::StrCat("expected a ", input.type));
    }
    bound[input.name] = *std::move(coerced);
  }
  return bound;
}

}  // namespace aevatar::orchestrator
