#include "aevatar/workflow/workflow_arguments.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "aevatar/workflow/workflow_internal.h"
#include "aevatar/workflow/workflow_template.h"

namespace aevatar::orchestrator {
namespace {

constexpr int kMaxTreeDepth = 32;
constexpr const char* kLanguages[] = {"python", "javascript", "typescript", "bash"};
constexpr const char* kCodeExecuteKeys[] = {"language", "source", "timeout_secs", "stdin", "env"};
// Normalized spellings (lower case, '-' -> '_', leading '_' dropped).
constexpr const char* kRouteSelectorKeys[] = {
    "route",      "route_id", "route_selector", "user_service_id", "userservice_id", "user_service",
    "service_id", "via",      "nyxid_via",      "target_route"};

bool IsLanguage(const std::string& s) {
  for (const char* language : kLanguages) {
    if (s == language) return true;
  }
  return false;
}

// Same rule as the interactive code_execute path (code_execute.cc).
bool IsValidEnvName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return !absl::StartsWithIgnoreCase(name, "NYXID_") && !absl::StartsWith(name, "LD_");
}

bool HasTemplate(const std::string& text, const std::string& path, absl::Status& error) {
  auto pieces = ParseTemplateString(text, path);
  if (!pieces.ok()) {
    error = pieces.status();
    return false;
  }
  for (const TemplatePiece& piece : *pieces) {
    if (piece.ref) return true;
  }
  return false;
}

// The checks shared by definition time and render time; `code` is the api
// code to report, `templates_allowed` whether "${...}" may stand in for a
// language or timeout.
absl::StatusOr<std::optional<int>> CheckCodeExecute(const nlohmann::json& args,
                                                    const std::string& path, const char* code,
                                                    bool templates_allowed) {
  if (!args.is_object()) return WorkflowError(code, path, "must be a mapping");
  for (const auto& [key, value] : args.items()) {
    bool known = false;
    for (const char* name : kCodeExecuteKeys) known = known || key == name;
    if (!known) return WorkflowError(code, JoinPath(path, key), "unknown code_execute argument");
  }
  const std::string language_path = JoinPath(path, "language");
  auto language = args.find("language");
  if (language == args.end() || !language->is_string()) {
    return WorkflowError(code, language_path, "required string");
  }
  absl::Status template_error;
  const bool language_templated =
      templates_allowed && HasTemplate(language->get<std::string>(), language_path, template_error);
  if (!template_error.ok()) return template_error;
  if (!language_templated && !IsLanguage(language->get<std::string>())) {
    return WorkflowError(code, language_path,
                         "must be one of python, javascript, typescript, bash");
  }
  auto source = args.find("source");
  if (source == args.end() || !source->is_string() || source->get<std::string>().empty()) {
    return WorkflowError(code, JoinPath(path, "source"), "required non-empty string");
  }
  std::optional<int> timeout_secs;
  const std::string timeout_path = JoinPath(path, "timeout_secs");
  auto timeout = args.find("timeout_secs");
  if (timeout == args.end()) return WorkflowError(code, timeout_path, "required");
  if (timeout->is_number_integer()) {
    const int64_t secs = AsInt64(*timeout).value_or(-1);
    if (secs < 1 || secs > kCodeExecuteMaxTimeoutSecs) {
      return WorkflowError(code, timeout_path, "must be between 1 and 600");
    }
    timeout_secs = static_cast<int>(secs);
  } else if (templates_allowed && timeout->is_string()) {
    auto pieces = ParseTemplateString(timeout->get<std::string>(), timeout_path);
    if (!pieces.ok()) return pieces.status();
    if (!IsSingleTemplate(*pieces)) {
      return WorkflowError(code, timeout_path, "must be an integer 1..600 or a single template");
    }
  } else {
    return WorkflowError(code, timeout_path, "must be an integer between 1 and 600");
  }
  if (auto in = args.find("stdin"); in != args.end() && !in->is_string()) {
    return WorkflowError(code, JoinPath(path, "stdin"), "must be a string");
  }
  if (auto env = args.find("env"); env != args.end()) {
    const std::string env_path = JoinPath(path, "env");
    if (!env->is_object()) return WorkflowError(code, env_path, "must be a mapping");
    for (const auto& [name, value] : env->items()) {
      if (!IsValidEnvName(name)) {
        return WorkflowError(code, JoinPath(env_path, name),
                             "env names must match [A-Za-z_][A-Za-z0-9_]* and not start with "
                             "NYXID_ or LD_");
      }
      if (!value.is_string())
        return WorkflowError(code, JoinPath(env_path, name), "must be a string");
    }
  }
  return timeout_secs;
}

}  // namespace

bool IsRouteSelectorKey(const std::string& key) {
  std::string normalized = absl::AsciiStrToLower(key);
  for (char& c : normalized) {
    if (c == '-') c = '_';
  }
  const size_t start = normalized.find_first_not_of('_');
  if (start == std::string::npos) return false;
  normalized.erase(0, start);
  for (const char* selector : kRouteSelectorKeys) {
    if (normalized == selector) return true;
  }
  return false;
}

absl::Status RejectRouteSelectors(const nlohmann::json& tree, const std::string& path) {
  struct Walker {
    absl::Status Walk(const nlohmann::json& node, const std::string& at, int depth) {
      if (depth > kMaxTreeDepth) return WorkflowInvalid(at, "nested too deeply");
      if (node.is_object()) {
        for (const auto& [key, value] : node.items()) {
          const std::string key_path = JoinPath(at, key);
          if (IsRouteSelectorKey(key)) {
            return WorkflowError(kWorkflowRouteSelectorForbidden, key_path,
                                 "a route selector is never authored in a workflow; aevatar "
                                 "admits the executor route itself");
          }
          if (absl::Status s = Walk(value, key_path, depth + 1); !s.ok()) return s;
        }
      } else if (node.is_array()) {
        for (size_t i = 0; i < node.size(); ++i) {
          if (absl::Status s = Walk(node[i], IndexPath(at, i), depth + 1); !s.ok()) return s;
        }
      }
      return absl::OkStatus();
    }
  };
  return Walker{}.Walk(tree, path, 0);
}

absl::StatusOr<std::optional<int>> NormalizeCodeExecuteArguments(nlohmann::json& arguments,
                                                                 const std::string& path) {
  if (arguments.is_object()) {
    // Optional fields written as null mean "absent"; the default is explicit.
    for (const char* key : {"stdin", "env"}) {
      if (auto it = arguments.find(key); it != arguments.end() && it->is_null()) {
        arguments.erase(it);
      }
    }
    if (auto it = arguments.find("timeout_secs"); it == arguments.end() || it->is_null()) {
      arguments["timeout_secs"] = kCodeExecuteDefaultTimeoutSecs;
    }
  }
  return CheckCodeExecute(arguments, path, kWorkflowInvalid, /*templates_allowed=*/true);
}

absl::Status CheckRenderedCodeExecuteArguments(const nlohmann::json& arguments,
                                               int64_t step_timeout_ms, const std::string& path) {
  auto timeout_secs =
      CheckCodeExecute(arguments, path, kWorkflowArgumentsInvalid, /*templates_allowed=*/false);
  if (!timeout_secs.ok()) return timeout_secs.status();
  if (**timeout_secs * int64_t{1000} >= step_timeout_ms) {
    return WorkflowError(kWorkflowArgumentsInvalid, JoinPath(path, "timeout_secs"),
                         "must end before the step's timeout_ms");
  }
  return absl::OkStatus();
}

}  // namespace aevatar::orchestrator
