#include "aevatar/codex/codex_exec_args.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// Members a caller might send to steer the runner: each is named as
// forbidden (the spec's obsolete and caller-controlled shapes), not merely
// unknown, so the error says why.
const std::set<std::string>& ForbiddenNames() {
  static const std::set<std::string> names = {"service",
                                              "principal",
                                              "node_id",
                                              "model",
                                              "model_provider",
                                              "provider",
                                              "image",
                                              "path",
                                              "workspace_path",
                                              "cwd",
                                              "repository",
                                              "repo",
                                              "shell",
                                              "command",
                                              "cmd",
                                              "args",
                                              "flag",
                                              "flags",
                                              "codex_flags",
                                              "sandbox",
                                              "sandbox_mode",
                                              "sandbox_flags",
                                              "approval_policy",
                                              "profile",
                                              "codex_home",
                                              "config",
                                              "env",
                                              "credential",
                                              "credentials",
                                              "token",
                                              "api_key",
                                              "key",
                                              "agent_key",
                                              "auth",
                                              "auth_json",
                                              "authorization",
                                              "model_route",
                                              "base_url"};
  return names;
}

absl::Status Bad(const char* code, std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, code, std::move(detail), 400);
}

// Rejects any member of `object` outside `allowed`; `where` prefixes the name.
absl::Status OnlyMembers(const json& object, std::initializer_list<const char*> allowed,
                         const std::string& where) {
  for (const auto& [name, value] : object.items()) {
    bool known = false;
    for (const char* ok : allowed) known = known || name == ok;
    if (known) continue;
    // The name is the caller's text: only a short plain token is echoed.
    const bool plain =
        name.size() <= 64 && name.find_first_not_of(
                                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_-") == std::string::npos;
    const std::string shown = where + (plain ? name : std::string("<member>"));
    if (ForbiddenNames().contains(name)) {
      return Bad(kCodexFieldForbidden,
                 absl::StrCat("field '", shown,
                              "' is not accepted: the managed runner's model, image, path, "
                              "provider, shell, flags and credentials are fixed by the operator"));
    }
    return Bad(kCodexFieldUnknown, absl::StrCat("field '", shown, "' is not part of codex_exec"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> KindOf(const json& object, const std::string& where) {
  auto kind = base::OptionalString(object, "kind");
  if (!kind.ok()) return Bad(kCodexFieldType, "field '" + where + ".kind' must be a string");
  if (!kind->has_value()) return Bad(kCodexTargetInvalid, "field '" + where + ".kind' is required");
  return **kind;
}

absl::Status NonEmptyString(const json& object, const char* name, const std::string& where,
                            std::string* out) {
  auto value = base::OptionalString(object, name);
  if (!value.ok()) {
    return Bad(kCodexFieldType, absl::StrCat("field '", where, name, "' must be a string"));
  }
  if (!value->has_value() || (*value)->empty() || (*value)->size() > 256) {
    return Bad(kCodexTargetInvalid,
               absl::StrCat("field '", where, name, "' is required (1 to 256 characters)"));
  }
  *out = **value;
  return absl::OkStatus();
}

absl::Status ParseTarget(const json& root, CodexExecArgs& args) {
  auto target = root.find("target");
  if (target == root.end() || target->is_null()) {
    return Bad(kCodexTargetInvalid,
               "field 'target' is required: {\"kind\": \"managed_sandbox\"} or {\"kind\": "
               "\"private_ssh\", \"private_ssh\": {service, principal}}");
  }
  if (!target->is_object()) return Bad(kCodexFieldType, "field 'target' must be an object");
  auto kind = KindOf(*target, "target");
  if (!kind.ok()) return kind.status();
  const bool has_workspace = root.contains("workspace") && !root["workspace"].is_null();
  if (*kind == "managed_sandbox") {
    if (absl::Status st = OnlyMembers(*target, {"kind"}, "target."); !st.ok()) return st;
    args.target = CodexTarget::kManagedSandbox;
    if (!has_workspace) {
      return Bad(kCodexWorkspaceInvalid,
                 "managed_sandbox requires field 'workspace' = {\"kind\": \"empty_git\"}");
    }
    const json& workspace = root["workspace"];
    if (!workspace.is_object()) return Bad(kCodexFieldType, "field 'workspace' must be an object");
    if (absl::Status st = OnlyMembers(workspace, {"kind"}, "workspace."); !st.ok()) return st;
    auto workspace_kind = base::OptionalString(workspace, "kind");
    if (!workspace_kind.ok()) {
      return Bad(kCodexFieldType, "field 'workspace.kind' must be a string");
    }
    if (!workspace_kind->has_value() || **workspace_kind != "empty_git") {
      return Bad(kCodexWorkspaceInvalid, "field 'workspace.kind' must be \"empty_git\"");
    }
    return absl::OkStatus();
  }
  if (*kind == "private_ssh") {
    if (absl::Status st = OnlyMembers(*target, {"kind", "private_ssh"}, "target."); !st.ok()) {
      return st;
    }
    args.target = CodexTarget::kPrivateSsh;
    args.timeout_secs = kCodexPrivateDefaultTimeoutSecs;
    if (has_workspace) {
      return Bad(kCodexWorkspaceInvalid,
                 "private_ssh takes no field 'workspace' (the host's Git workspace is fixed)");
    }
    auto nested = target->find("private_ssh");
    if (nested == target->end() || nested->is_null()) {
      return Bad(kCodexTargetInvalid,
                 "field 'target.private_ssh' = {service, principal} is required for private_ssh");
    }
    if (!nested->is_object()) {
      return Bad(kCodexFieldType, "field 'target.private_ssh' must be an object");
    }
    if (absl::Status st = OnlyMembers(*nested, {"service", "principal"}, "target.private_ssh.");
        !st.ok()) {
      return st;
    }
    if (absl::Status st =
            NonEmptyString(*nested, "service", "target.private_ssh.", &args.ssh_service);
        !st.ok()) {
      return st;
    }
    return NonEmptyString(*nested, "principal", "target.private_ssh.", &args.ssh_principal);
  }
  return Bad(kCodexTargetInvalid,
             "field 'target.kind' must be \"managed_sandbox\" or \"private_ssh\"");
}

}  // namespace

absl::StatusOr<CodexExecArgs> CodexExecArgsFromJson(const json& root) {
  if (!root.is_object()) return Bad(kCodexMalformedJson, "the arguments must be a JSON object");
  if (absl::Status st = OnlyMembers(root, {"target", "workspace", "prompt", "timeout_secs"}, "");
      !st.ok()) {
    return st;
  }
  CodexExecArgs args;
  if (absl::Status st = ParseTarget(root, args); !st.ok()) return st;
  auto prompt = base::OptionalString(root, "prompt");
  if (!prompt.ok()) return Bad(kCodexFieldType, "field 'prompt' must be a string");
  if (!prompt->has_value() || (*prompt)->empty()) {
    return Bad(kCodexPromptInvalid, "field 'prompt' is required and must not be empty");
  }
  if ((*prompt)->size() > kCodexMaxPromptBytes) {
    return Bad(kCodexPromptInvalid, "field 'prompt' exceeds 65536 bytes");
  }
  args.prompt = **prompt;
  if (auto timeout = root.find("timeout_secs"); timeout != root.end() && !timeout->is_null()) {
    if (!timeout->is_number_integer()) {
      return Bad(kCodexFieldType, "field 'timeout_secs' must be an integer");
    }
    const bool in_range =
        timeout->is_number_unsigned()
            ? timeout->get<uint64_t>() <= static_cast<uint64_t>(kCodexMaxTimeoutSecs) &&
                  timeout->get<uint64_t>() >= 1
            : timeout->get<int64_t>() >= 1 && timeout->get<int64_t>() <= kCodexMaxTimeoutSecs;
    if (!in_range) {
      return Bad(kCodexTimeoutInvalid, "field 'timeout_secs' must be between 1 and 600");
    }
    args.timeout_secs = static_cast<int>(timeout->get<int64_t>());
  }
  return args;
}

absl::StatusOr<CodexExecArgs> ParseCodexExecArgs(std::string_view body) {
  auto root = base::ParseStrictJsonObject(body);
  if (!root.ok()) {
    return Bad(kCodexMalformedJson, "the body must be one JSON object without repeated keys");
  }
  return CodexExecArgsFromJson(*root);
}

json ManagedCodexRequestBody(const CodexExecArgs& args, const std::string& llm_user_service_id) {
  return {{"prompt", args.prompt},
          {"timeout_secs", args.timeout_secs},
          {"model_route", {{"user_service_id", llm_user_service_id}}}};
}

json CodexExecInputSchema() {
  const json kind_only = {
      {"type", "object"}, {"additionalProperties", false}, {"required", {"kind"}}};
  json managed_target = kind_only;
  managed_target["properties"] = {{"kind", {{"const", "managed_sandbox"}}}};
  json private_target = {
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"kind", "private_ssh"}},
      {"properties",
       {{"kind", {{"const", "private_ssh"}}},
        {"private_ssh",
         {{"type", "object"},
          {"additionalProperties", false},
          {"required", {"service", "principal"}},
          {"properties",
           {{"service",
             {{"type", "string"},
              {"minLength", 1},
              {"description", "the SSH UserService slug or UUID, never a node id"}}},
            {"principal",
             {{"type", "string"}, {"minLength", 1}, {"description", "the Unix user"}}}}}}}}}};
  json workspace = kind_only;
  workspace["properties"] = {{"kind", {{"const", "empty_git"}}}};
  workspace["description"] = "required with managed_sandbox; forbidden with private_ssh";
  return {
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"target", "prompt"}},
      {"properties",
       {{"target", {{"oneOf", {managed_target, private_target}}}},
        {"workspace", workspace},
        {"prompt",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", kCodexMaxPromptBytes},
          {"description", "the natural-language task"}}},
        {"timeout_secs",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", kCodexMaxTimeoutSecs},
          {"default", kCodexDefaultTimeoutSecs}}}}},
  };
}

}  // namespace aevatar::orchestrator
