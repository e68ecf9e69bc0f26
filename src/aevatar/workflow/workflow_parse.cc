// YAML text -> JSON tree -> the shared validation in workflow_definition.cc.
// This is the only file that includes yaml-cpp; its exceptions stop here.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "aevatar/workflow/workflow_definition.h"
#include "aevatar/workflow/workflow_internal.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace aevatar::orchestrator {
namespace {

// Nesting and node bounds. The node bound also defeats alias expansion
// ("billion laughs"): yaml-cpp shares aliased nodes, the JSON copy would not.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxNodes = 20'000;

bool IsDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool LooksLikeInteger(const std::string& s) {
  return IsDigits(s, (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0);
}

// YAML 1.2 core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool LooksLikeFloat(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (!IsDigits(s.substr(i), 0)) return false;
    i = s.size();
  }
  return i == s.size();
}

bool IsNonFinite(const std::string& s) {
  for (const char* word : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
                           "-.INF", ".nan", ".NaN", ".NAN"}) {
    if (s == word) return true;
  }
  return false;
}

absl::StatusOr<nlohmann::json> ParseInteger(const std::string& text, const std::string& path) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return WorkflowInvalid(path, "integer out of range");
  return nlohmann::json(value);
}

// Resolves a scalar the way YAML 1.2's core schema does for plain scalars;
// quoted and block scalars are always strings.
absl::StatusOr<nlohmann::json> ConvertScalar(const YAML::Node& node, const std::string& path) {
  const std::string& text = node.Scalar();
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return nlohmann::json(text);
  if (tag == "tag:yaml.org,2002:int") {
    if (!LooksLikeInteger(text)) return WorkflowInvalid(path, "!!int value is not an integer");
    return ParseInteger(text, path);
  }
  if (tag != "?") return WorkflowInvalid(path, "unsupported YAML tag");
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nlohmann::json(nullptr);
  }
  if (text == "true" || text == "True" || text == "TRUE") return nlohmann::json(true);
  if (text == "false" || text == "False" || text == "FALSE") return nlohmann::json(false);
  if (LooksLikeInteger(text)) return ParseInteger(text, path);
  if (IsNonFinite(text)) return WorkflowInvalid(path, "non-finite numbers are not supported");
  if (LooksLikeFloat(text)) {
    double value = 0;
    if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
      return WorkflowInvalid(path, "number out of range");
    }
    return nlohmann::json(value);
  }
  return nlohmann::json(text);
}

class Converter {
 public:
  absl::StatusOr<nlohmann::json> Convert(const YAML::Node& node, const std::string& path,
                                         int depth) {
    if (++nodes_ > kMaxNodes) return WorkflowInvalid("", "the workflow has too many YAML nodes");
    if (depth > kMaxDepth) return WorkflowInvalid(path, "nested too deeply");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nlohmann::json(nullptr);
      case YAML::NodeType::Scalar:
        return ConvertScalar(node, path);
      case YAML::NodeType::Sequence: {
        nlohmann::json out = nlohmann::json::array();
        size_t index = 0;
        for (const YAML::Node& item : node) {
          auto value = Convert(item, IndexPath(path, index++), depth + 1);
          if (!value.ok()) return value.status();
          out.push_back(*std::move(value));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        nlohmann::json out = nlohmann::json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          if (!it->first.IsScalar()) return WorkflowInvalid(path, "mapping keys must be scalars");
          const std::string key = it->first.Scalar();
          const std::string key_path = JoinPath(path, key);
          if (out.contains(key)) return WorkflowInvalid(key_path, "duplicate key");
          auto value = Convert(it->second, key_path, depth + 1);
          if (!value.ok()) return value.status();
          out[key] = *std::move(value);
        }
        return out;
      }
    }
    return WorkflowInvalid(path, "unsupported YAML node");
  }

 private:
  size_t nodes_ = 0;
};

// Parse events are only counted, never built into nodes.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The number of documents in `yaml_text`, counting no further than `limit`.
// YAML::LoadAll cannot be used: on a stream whose top level starts with a
// flow entry (the two bytes ",a") yaml-cpp 0.7 yields empty documents
// forever without consuming anything, and LoadAll collects them until memory
// runs out (found by tests/fuzz/fuzz_workflow_yaml). Throws YAML::Exception
// on a syntax error, like the load that follows.
size_t CountDocuments(const std::string& yaml_text, size_t limit) {
  std::istringstream in(yaml_text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  size_t count = 0;
  while (count < limit && parser.HandleNextDocument(counter)) ++count;
  return count;
}

absl::StatusOr<nlohmann::json> YamlToJson(const std::string& yaml_text) {
  try {
    if (CountDocuments(yaml_text, 2) != 1) {
      return WorkflowInvalid("", "the YAML text must hold exactly one document");
    }
    const YAML::Node document = YAML::Load(yaml_text);
    Converter converter;
    return converter.Convert(document, "", 0);
  } catch (const YAML::Exception& e) {
    // e.msg is a fixed phrase, but some yaml-cpp messages quote a key; only
    // the position is reported so no workflow text leaks.
    if (e.mark.is_null()) return WorkflowInvalid("", "YAML syntax error");
    return WorkflowInvalid("", absl::StrCat("YAML syntax error at line ", e.mark.line + 1,
                                            ", column ", e.mark.column + 1));
  } catch (const std::exception&) {
    return WorkflowInvalid("", "the YAML text could not be parsed");
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseYamlDocument(const std::string& yaml_text) {
  if (yaml_text.size() > kMaxWorkflowYamlBytes) {
    return WorkflowInvalid("", absl::StrCat("the YAML exceeds ", kMaxWorkflowYamlBytes, " bytes"));
  }
  return YamlToJson(yaml_text);
}

absl::StatusOr<WorkflowDefinition> ParseWorkflowYaml(const std::string& yaml_text) {
  if (yaml_text.size() > kMaxWorkflowYamlBytes) {
    return WorkflowInvalid("",
                           absl::StrCat("the workflow exceeds ", kMaxWorkflowYamlBytes, " bytes"));
  }
  auto tree = YamlToJson(yaml_text);
  if (!tree.ok()) return tree.status();
  return ValidateWorkflowTree(*tree, /*allow_digest=*/false);
}

}  // namespace aevatar::orchestrator
