#ifndef AEVATAR_AEVATAR_CODEX_CODEX_EXEC_ARGS_H_
#define AEVATAR_AEVATAR_CODEX_CODEX_EXEC_ARGS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// The codex_exec tool's input and its strict validation (spec:
// sandbox-execution.md "codex_exec", codex-exec-workflow-sample.md). Two
// shapes, never mixed:
//   managed:  {"target": {"kind": "managed_sandbox"},
//              "workspace": {"kind": "empty_git"},
//              "prompt": str, "timeout_secs"?: 1..600 (default 180)}
//   private:  {"target": {"kind": "private_ssh",
//                         "private_ssh": {"service": str, "principal": str}},
//              "prompt": str, "timeout_secs"?: 1..600 (default 300)}  (no workspace)
// Every other member, at any level, is rejected: obsolete root-level
// `service`/`principal`, and anything a caller might use to choose a model,
// image, path, provider, shell, flag or credential. Validation runs before
// any network call; errors are typed 400s whose detail names the field and
// never echoes a value. Pure, thread-safe, never throws.
namespace aevatar::orchestrator {

inline constexpr int kCodexDefaultTimeoutSecs = 180;
// private_ssh's default (spec): a real host's Codex takes longer.
inline constexpr int kCodexPrivateDefaultTimeoutSecs = 300;
inline constexpr int kCodexMaxTimeoutSecs = 600;
// chrono-sandbox's bound on a prompt (contract §1).
inline constexpr size_t kCodexMaxPromptBytes = 65536;

// Typed 400 codes.
inline constexpr char kCodexMalformedJson[] = "MALFORMED_JSON";
inline constexpr char kCodexFieldUnknown[] = "CODEX_EXEC_FIELD_UNKNOWN";
inline constexpr char kCodexFieldForbidden[] = "CODEX_EXEC_FIELD_FORBIDDEN";
inline constexpr char kCodexFieldType[] = "INVALID_FIELD_TYPE";
inline constexpr char kCodexTargetInvalid[] = "CODEX_EXEC_TARGET_INVALID";
inline constexpr char kCodexWorkspaceInvalid[] = "CODEX_EXEC_WORKSPACE_INVALID";
inline constexpr char kCodexPromptInvalid[] = "CODEX_EXEC_PROMPT_INVALID";
inline constexpr char kCodexTimeoutInvalid[] = "INVALID_TIMEOUT";

enum class CodexTarget { kManagedSandbox, kPrivateSsh };

struct CodexExecArgs {
  CodexTarget target = CodexTarget::kManagedSandbox;
  std::string prompt;
  int timeout_secs = kCodexDefaultTimeoutSecs;
  // private_ssh only.
  std::string ssh_service;
  std::string ssh_principal;
};

// Validates a request body (one JSON object, no repeated keys).
absl::StatusOr<CodexExecArgs> ParseCodexExecArgs(std::string_view body);
// Validates an already parsed document (a workflow step's rendered arguments).
absl::StatusOr<CodexExecArgs> CodexExecArgsFromJson(const nlohmann::json& json);

// The managed request body of chrono-sandbox's POST /codex/execute (contract
// §1): {"prompt", "timeout_secs", "model_route": {"user_service_id"}}.
nlohmann::json ManagedCodexRequestBody(const CodexExecArgs& args,
                                       const std::string& llm_user_service_id);

// The tool's input schema (tool catalog).
nlohmann::json CodexExecInputSchema();

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_CODEX_EXEC_ARGS_H_
