#include "aevatar/workflow/workflow_template.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "aevatar/workflow/workflow_arguments.h"
#include "aevatar/workflow/workflow_internal.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

constexpr int kMaxRenderDepth = 32;

void AppendLiteral(std::vector<TemplatePiece>& pieces, const std::string& text) {
  if (text.empty()) return;
  if (!pieces.empty() && !pieces.back().ref) {
    pieces.back().literal += text;
  } else {
    pieces.push_back(TemplatePiece{text, std::nullopt});
  }
}

absl::StatusOr<TemplateRef> ParseReference(const std::string& inner, const std::string& path) {
  const std::vector<std::string> parts = absl::StrSplit(inner, '.');
  if (parts.size() == 2 && parts[0] == "inputs" && IsValidInputName(parts[1])) {
    return TemplateRef{TemplateRef::Kind::kInput, parts[1], ""};
  }
  if (parts.size() == 3 && parts[0] == "inputs" && IsValidInputName(parts[1]) &&
      IsValidInputName(parts[2])) {
    return TemplateRef{TemplateRef::Kind::kInput, parts[1], parts[2]};
  }
  if (parts.size() == 3 && parts[0] == "steps" && IsValidStepId(parts[1])) {
    if (!IsTemplateStepField(parts[2])) {
      return WorkflowInvalid(path,
                             "a step template field must be one of stdout, stderr, exit_code, "
                             "status, trimmed_output");
    }
    return TemplateRef{TemplateRef::Kind::kStepOutput, parts[1], parts[2]};
  }
  return WorkflowInvalid(
      path, "a template must be ${inputs.NAME}, ${inputs.NAME.MEMBER} or ${steps.ID.FIELD}");
}

// Text form of a value substituted into a longer string.
std::string AsText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string TrimAscii(const std::string& text) {
  return std::string(absl::StripAsciiWhitespace(text));
}

class Renderer {
 public:
  Renderer(const nlohmann::json& inputs, const nlohmann::json& step_outputs)
      : inputs_(inputs), step_outputs_(step_outputs) {}

  absl::StatusOr<nlohmann::json> Render(const nlohmann::json& node, const std::string& path,
                                        int depth) const {
    if (depth > kMaxRenderDepth) return WorkflowInvalid(path, "nested too deeply");
    if (node.is_string()) return RenderString(node.get<std::string>(), path);
    if (node.is_object()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, value] : node.items()) {
        auto rendered = Render(value, JoinPath(path, key), depth + 1);
        if (!rendered.ok()) return rendered.status();
        out[key] = *std::move(rendered);
      }
      return out;
    }
    if (node.is_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (size_t i = 0; i < node.size(); ++i) {
        auto rendered = Render(node[i], IndexPath(path, i), depth + 1);
        if (!rendered.ok()) return rendered.status();
        out.push_back(*std::move(rendered));
      }
      return out;
    }
    return node;
  }

 private:
  absl::StatusOr<nlohmann::json> RenderString(const std::string& text,
                                              const std::string& path) const {
    auto pieces = ParseTemplateString(text, path);
    if (!pieces.ok()) return pieces.status();
    if (IsSingleTemplate(*pieces)) return Resolve(*pieces->front().ref, path);
    std::string out;
    for (const TemplatePiece& piece : *pieces) {
      if (!piece.ref) {
        out += piece.literal;
        continue;
      }
      auto value = Resolve(*piece.ref, path);
      if (!value.ok()) return value.status();
      out += AsText(*value);
    }
    return nlohmann::json(std::move(out));
  }

  absl::StatusOr<nlohmann::json> Resolve(const TemplateRef& ref, const std::string& path) const {
    if (ref.kind == TemplateRef::Kind::kInput) {
      if (inputs_.is_object()) {
        if (auto it = inputs_.find(ref.name); it != inputs_.end()) {
          return ref.field.empty() ? *it : Member(*it, ref, path);
        }
      }
      return WorkflowError(kWorkflowArgumentsInvalid, path,
                           absl::StrCat("input '", ref.name, "' is not bound"));
    }
    if (step_outputs_.is_object()) {
      if (auto step = step_outputs_.find(ref.name);
          step != step_outputs_.end() && step->is_object()) {
        if (auto it = step->find(ref.field); it != step->end()) return *it;
        if (ref.field == "trimmed_output") {
          if (auto out = step->find("stdout"); out != step->end() && out->is_string()) {
            return nlohmann::json(TrimAscii(out->get<std::string>()));
          }
        }
      }
    }
    return WorkflowError(
        kWorkflowArgumentsInvalid, path,
        absl::StrCat("output '", ref.field, "' of step '", ref.name, "' is not available"));
  }

  // ${inputs.NAME.MEMBER}: the input is a string holding a JSON object (the
  // spec's private-SSH canary passes {"service", "principal"} as its prompt);
  // the member must be a string.
  static absl::StatusOr<nlohmann::json> Member(const nlohmann::json& input, const TemplateRef& ref,
                                               const std::string& path) {
    const auto missing = [&] {
      return WorkflowError(kWorkflowArgumentsInvalid, path,
                           absl::StrCat("input '", ref.name,
                                        "' must be a JSON object text with a "
                                        "string member '",
                                        ref.field, "'"));
    };
    if (!input.is_string()) return missing();
    auto object = base::ParseJsonObject(input.get<std::string>());
    if (!object.ok()) return missing();
    auto member = object->find(ref.field);
    if (member == object->end() || !member->is_string()) return missing();
    return *member;
  }

  const nlohmann::json& inputs_;
  const nlohmann::json& step_outputs_;
};

}  // namespace

absl::StatusOr<std::vector<TemplatePiece>> ParseTemplateString(const std::string& text,
                                                               const std::string& path) {
  std::vector<TemplatePiece> pieces;
  size_t literal_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      AppendLiteral(pieces, text.substr(literal_start, i - literal_start) + "${");
      i += 3;
      literal_start = i;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      ++i;
      continue;
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string::npos) return WorkflowInvalid(path, "unterminated ${ template");
    const std::string inner(absl::StripAsciiWhitespace(text.substr(i + 2, close - i - 2)));
    auto ref = ParseReference(inner, path);
    if (!ref.ok()) return ref.status();
    AppendLiteral(pieces, text.substr(literal_start, i - literal_start));
    pieces.push_back(TemplatePiece{"", *std::move(ref)});
    i = close + 1;
    literal_start = i;
  }
  AppendLiteral(pieces, text.substr(literal_start));
  return pieces;
}

bool IsSingleTemplate(const std::vector<TemplatePiece>& pieces) {
  return pieces.size() == 1 && pieces.front().ref.has_value();
}

absl::StatusOr<nlohmann::json> RenderStepArguments(const WorkflowStep& step,
                                                   const nlohmann::json& inputs,
                                                   const nlohmann::json& step_outputs) {
  const std::string path = JoinPath(JoinPath("steps", step.id), "arguments");
  auto rendered = Renderer(inputs, step_outputs).Render(step.arguments, path, 0);
  if (!rendered.ok()) return rendered.status();
  try {
    // An earlier step's raw output may not be UTF-8; catch it here so callers
    // can serialize the result without a throwing dump().
    (void)rendered->dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::exception&) {
    return WorkflowError(kWorkflowArgumentsInvalid, path, "rendered text is not valid UTF-8");
  }
  if (step.tool == "code_execute") {
    if (absl::Status s = CheckRenderedCodeExecuteArguments(*rendered, step.timeout_ms, path);
        !s.ok()) {
      return s;
    }
  }
  return rendered;
}

}  // namespace aevatar::orchestrator
