// Validation of a workflow tree into a WorkflowDefinition, its canonical JSON
// form and digest. YAML reaches this file already converted (workflow_parse.cc).
#include "aevatar/workflow/workflow_definition.h"

#include <map>
#include <set>

#include "aevatar/workflow/workflow_arguments.h"
#include "aevatar/workflow/workflow_expect.h"
#include "aevatar/workflow/workflow_internal.h"
#include "aevatar/workflow/workflow_template.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

constexpr int kMaxReferenceDepth = 32;

// What a step's templates may reference: declared inputs and the ids of
// the steps before it.
struct ReferenceScope {
  const std::set<std::string>& inputs;
  const std::set<std::string>& earlier_steps;
};

absl::Status CheckReferences(const nlohmann::json& node, const std::string& path,
                             const ReferenceScope& scope, int depth) {
  if (depth > kMaxReferenceDepth) return WorkflowInvalid(path, "nested too deeply");
  if (node.is_string()) {
    auto pieces = ParseTemplateString(node.get<std::string>(), path);
    if (!pieces.ok()) return pieces.status();
    for (const TemplatePiece& piece : *pieces) {
      if (!piece.ref) continue;
      const TemplateRef& ref = *piece.ref;
      if (ref.kind == TemplateRef::Kind::kInput && !scope.inputs.contains(ref.name)) {
        return WorkflowInvalid(path, absl::StrCat("references undeclared input '", ref.name, "'"));
      }
      if (ref.kind == TemplateRef::Kind::kStepOutput && !scope.earlier_steps.contains(ref.name)) {
        return WorkflowInvalid(
            path, absl::StrCat("references step '", ref.name, "', which is not an earlier step"));
      }
    }
  } else if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (absl::Status s = CheckReferences(value, JoinPath(path, key), scope, depth + 1); !s.ok())
        return s;
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      if (absl::Status s = CheckReferences(node[i], IndexPath(path, i), scope, depth + 1); !s.ok())
        return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkflowStep> ParseStep(const nlohmann::json& item, const std::string& path,
                                       const ReferenceScope& scope) {
  if (!item.is_object()) return WorkflowInvalid(path, "must be a mapping");
  for (const auto& [key, value] : item.items()) {
    if (key != "id" && key != "tool" && key != "arguments" && key != "timeout_ms" &&
        key != "expect") {
      return WorkflowInvalid(JoinPath(path, key), "unknown field");
    }
  }
  WorkflowStep step;
  auto id = item.find("id");
  if (id == item.end() || !id->is_string() || !IsValidStepId(id->get<std::string>())) {
    return WorkflowInvalid(JoinPath(path, "id"), "required, matching [a-z0-9_-]{1,63}");
  }
  step.id = id->get<std::string>();
  auto tool = item.find("tool");
  if (tool == item.end() || !tool->is_string() ||
      (*tool != "code_execute" && *tool != "codex_exec")) {
    return WorkflowInvalid(JoinPath(path, "tool"), "required, one of code_execute, codex_exec");
  }
  step.tool = tool->get<std::string>();
  const std::string args_path = JoinPath(path, "arguments");
  auto arguments = item.find("arguments");
  if (arguments == item.end() || !arguments->is_object()) {
    return WorkflowInvalid(args_path, "required mapping");
  }
  step.arguments = *arguments;
  std::optional<int> timeout_secs;  // code_execute's literal timeout_secs
  if (step.tool == "code_execute") {
    auto literal = NormalizeCodeExecuteArguments(step.arguments, args_path);
    if (!literal.ok()) return literal.status();
    timeout_secs = *literal;
  }
  if (absl::Status s = CheckReferences(step.arguments, args_path, scope, 0); !s.ok()) return s;

  const std::string timeout_path = JoinPath(path, "timeout_ms");
  if (auto timeout = item.find("timeout_ms"); timeout != item.end() && !timeout->is_null()) {
    const std::optional<int64_t> ms = AsInt64(*timeout);
    if (!ms || *ms < 1 || *ms > kMaxStepTimeoutMs) {
      return WorkflowInvalid(timeout_path, "must be an integer between 1 and 3600000");
    }
    step.timeout_ms = *ms;
  } else if (step.tool == "code_execute") {
    // A template timeout_secs may render to anything up to the maximum, so
    // the default must cover the maximum.
    step.timeout_ms = int64_t{timeout_secs.value_or(kCodeExecuteMaxTimeoutSecs)} * 1000 +
                      kCodeExecuteStepMarginMs;
  } else {
    step.timeout_ms = kCodexExecDefaultTimeoutMs;
  }
  // The step deadline must observe the executor's own timeout, not race it.
  if (step.tool == "code_execute" && timeout_secs &&
      step.timeout_ms <= int64_t{*timeout_secs} * 1000) {
    return WorkflowInvalid(timeout_path, "must exceed arguments.timeout_secs * 1000");
  }
  if (auto expect = item.find("expect"); expect != item.end() && !expect->is_null()) {
    auto parsed = ParseExpectation(*expect, JoinPath(path, "expect"));
    if (!parsed.ok()) return parsed.status();
    step.expect = *std::move(parsed);
  }
  return step;
}

absl::StatusOr<std::string> OptionalDescription(const nlohmann::json& tree,
                                                const std::string& path) {
  auto text = tree.find("description");
  if (text == tree.end() || text->is_null()) return std::string();
  if (!text->is_string() ||
      text->get_ref<const std::string&>().size() > kMaxWorkflowDescriptionBytes) {
    return WorkflowInvalid(path, "must be a string of at most 4096 bytes");
  }
  return text->get<std::string>();
}

}  // namespace

absl::StatusOr<WorkflowDefinition> ValidateWorkflowTree(const nlohmann::json& tree,
                                                        bool allow_digest) {
  if (!tree.is_object()) return WorkflowInvalid("", "a workflow must be a mapping");
  // First, so a selector is reported as such even where a key is unknown.
  if (absl::Status s = RejectRouteSelectors(tree, ""); !s.ok()) return s;
  for (const auto& [key, value] : tree.items()) {
    if (key != "workflow_id" && key != "description" && key != "inputs" && key != "steps" &&
        key != "triggers" && !(allow_digest && key == "digest")) {
      return WorkflowInvalid(JoinPath("", key), "unknown field");
    }
  }
  WorkflowDefinition def;
  auto id = tree.find("workflow_id");
  if (id == tree.end() || !id->is_string() || !IsValidWorkflowId(id->get<std::string>())) {
    return WorkflowInvalid("workflow_id", "required, matching [a-z0-9-]{1,63}");
  }
  def.workflow_id = id->get<std::string>();
  auto description = OptionalDescription(tree, "description");
  if (!description.ok()) return description.status();
  def.description = *std::move(description);

  auto inputs =
      ParseWorkflowInputs(tree.contains("inputs") ? tree["inputs"] : nlohmann::json(), "inputs");
  if (!inputs.ok()) return inputs.status();
  def.inputs = *std::move(inputs);
  std::set<std::string> input_names;
  for (const WorkflowInput& input : def.inputs) input_names.insert(input.name);

  auto steps = tree.find("steps");
  if (steps == tree.end() || !steps->is_array() || steps->empty() ||
      steps->size() > kMaxWorkflowSteps) {
    return WorkflowInvalid("steps", "required list of 1 to 64 steps");
  }
  std::set<std::string> earlier_steps;
  for (size_t i = 0; i < steps->size(); ++i) {
    auto step = ParseStep((*steps)[i], IndexPath("steps", i), {input_names, earlier_steps});
    if (!step.ok()) return step.status();
    if (!earlier_steps.insert(step->id).second) {
      return WorkflowInvalid(JoinPath(IndexPath("steps", i), "id"), "duplicate step id");
    }
    def.steps.push_back(*std::move(step));
  }

  auto triggers = ParseWorkflowTriggers(
      tree.contains("triggers") ? tree["triggers"] : nlohmann::json(), "triggers");
  if (!triggers.ok()) return triggers.status();
  def.triggers = *std::move(triggers);

  std::string canonical;
  try {
    // Strict: text that is not UTF-8 cannot have one canonical encoding.
    canonical = WorkflowToJson(def).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception&) {
    return WorkflowInvalid("", "text must be valid UTF-8");
  }
  def.digest = "sha256:" + base::Sha256Hex(canonical);
  if (auto claimed = tree.find("digest"); claimed != tree.end() && *claimed != def.digest) {
    return WorkflowInvalid("digest", "does not match the workflow content");
  }
  return def;
}

nlohmann::json WorkflowToJson(const WorkflowDefinition& def) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const WorkflowInput& input : def.inputs) inputs.push_back(WorkflowInputToJson(input));
  nlohmann::json steps = nlohmann::json::array();
  for (const WorkflowStep& step : def.steps) {
    nlohmann::json out = {{"id", step.id},
                          {"tool", step.tool},
                          {"arguments", step.arguments},
                          {"timeout_ms", step.timeout_ms}};
    if (step.expect) out["expect"] = ExpectationToJson(*step.expect);
    steps.push_back(std::move(out));
  }
  nlohmann::json out = {{"workflow_id", def.workflow_id},
                        {"description", def.description},
                        {"inputs", std::move(inputs)},
                        {"steps", std::move(steps)}};
  if (!def.triggers.empty()) {
    nlohmann::json triggers = nlohmann::json::array();
    for (const WorkflowTrigger& trigger : def.triggers) {
      triggers.push_back(WorkflowTriggerToJson(trigger));
    }
    out["triggers"] = std::move(triggers);
  }
  if (!def.digest.empty()) out["digest"] = def.digest;
  return out;
}

absl::StatusOr<WorkflowDefinition> WorkflowFromJson(const nlohmann::json& json) {
  return ValidateWorkflowTree(json, /*allow_digest=*/true);
}

}  // namespace aevatar::orchestrator
