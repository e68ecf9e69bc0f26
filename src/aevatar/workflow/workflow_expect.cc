#include "aevatar/workflow/workflow_expect.h"

#include <climits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "aevatar/workflow/workflow_internal.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kMaxFields = 32;

bool IsEmptyValue(const nlohmann::json& value) {
  if (value.is_null()) return true;
  if (value.is_string()) return value.get_ref<const std::string&>().empty();
  if (value.is_array() || value.is_object()) return value.empty();
  return false;
}

absl::StatusOr<std::string> FieldName(const nlohmann::json& value, const std::string& path) {
  if (!value.is_string() || !IsValidFieldName(value.get<std::string>())) {
    return WorkflowInvalid(path, "must be a field name matching [a-z_][a-z0-9_]{0,63}");
  }
  return value.get<std::string>();
}

}  // namespace

ExpectationResult EvaluateExpectation(const StepExpectation& expect,
                                      const nlohmann::json& step_output) {
  ExpectationResult result;
  auto fail = [&result](std::string failure) {
    result.passed = false;
    result.failures.push_back(std::move(failure));
  };
  auto field = [&step_output](const std::string& name) -> const nlohmann::json* {
    if (!step_output.is_object()) return nullptr;
    auto it = step_output.find(name);
    return it == step_output.end() ? nullptr : &*it;
  };
  for (const auto& [name, expected] : expect.equals) {
    const nlohmann::json* actual = field(name);
    if (actual == nullptr) {
      fail(absl::StrCat("equals: field '", name, "' is missing"));
    } else if (*actual != expected) {
      fail(absl::StrCat("equals: field '", name, "' differs"));
    }
  }
  if (expect.trimmed_output_equals) {
    const nlohmann::json* out = field("stdout");
    if (out == nullptr || !out->is_string()) {
      fail("trimmed_output_equals: stdout is missing");
    } else if (absl::StripAsciiWhitespace(out->get_ref<const std::string&>()) !=
               *expect.trimmed_output_equals) {
      fail("trimmed stdout differs");
    }
  }
  if (expect.exit_code) {
    const nlohmann::json* code = field("exit_code");
    const std::optional<int64_t> actual = code ? AsInt64(*code) : std::nullopt;
    if (!actual) {
      fail("exit_code: missing");
    } else if (*actual != *expect.exit_code) {
      fail("exit_code differs");
    }
  }
  for (const std::string& name : expect.non_empty) {
    const nlohmann::json* value = field(name);
    if (value == nullptr || IsEmptyValue(*value)) {
      fail(absl::StrCat("non_empty: field '", name, "' is missing or empty"));
    }
  }
  return result;
}

absl::StatusOr<StepExpectation> ParseExpectation(const nlohmann::json& json,
                                                 const std::string& path) {
  if (!json.is_object()) return WorkflowInvalid(path, "must be a mapping");
  StepExpectation expect;
  bool any_check = false;
  for (const auto& [key, value] : json.items()) {
    const std::string key_path = JoinPath(path, key);
    if (key == "equals") {
      if (!value.is_object() || value.empty()) {
        return WorkflowInvalid(key_path, "must be a non-empty mapping of field to value");
      }
      if (value.size() > kMaxFields) return WorkflowInvalid(key_path, "too many fields");
      for (const auto& [name, expected] : value.items()) {
        const std::string field_path = JoinPath(key_path, name);
        auto field = FieldName(name, field_path);
        if (!field.ok()) return field.status();
        if (!expected.is_primitive()) {
          return WorkflowInvalid(field_path, "must be a string, number, boolean or null");
        }
        expect.equals[*field] = expected;
      }
    } else if (key == "trimmed_output_equals") {
      if (!value.is_string()) return WorkflowInvalid(key_path, "must be a string (quote it)");
      expect.trimmed_output_equals = value.get<std::string>();
    } else if (key == "exit_code") {
      const std::optional<int64_t> code = AsInt64(value);
      if (!code || *code < INT_MIN || *code > INT_MAX) {
        return WorkflowInvalid(key_path, "must be an integer");
      }
      expect.exit_code = static_cast<int>(*code);
    } else if (key == "non_empty") {
      if (!value.is_array() || value.empty()) {
        return WorkflowInvalid(key_path, "must be a non-empty list of field names");
      }
      if (value.size() > kMaxFields) return WorkflowInvalid(key_path, "too many fields");
      for (size_t i = 0; i < value.size(); ++i) {
        auto field = FieldName(value[i], IndexPath(key_path, i));
        if (!field.ok()) return field.status();
        expect.non_empty.push_back(*field);
      }
    } else {
      return WorkflowInvalid(key_path, "unknown expectation");
    }
    any_check = true;
  }
  if (!any_check) return WorkflowInvalid(path, "must hold at least one check");
  return expect;
}

nlohmann::json ExpectationToJson(const StepExpectation& expect) {
  nlohmann::json out = nlohmann::json::object();
  if (!expect.equals.empty()) {
    out["equals"] = nlohmann::json::object();
    for (const auto& [name, value] : expect.equals) out["equals"][name] = value;
  }
  if (expect.trimmed_output_equals) out["trimmed_output_equals"] = *expect.trimmed_output_equals;
  if (expect.exit_code) out["exit_code"] = *expect.exit_code;
  if (!expect.non_empty.empty()) out["non_empty"] = expect.non_empty;
  return out;
}

}  // namespace aevatar::orchestrator
