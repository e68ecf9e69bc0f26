#include "aevatar/admission/tool_catalog.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kSelectionRules[] =
    "Selection rules: exact source code to execute -> code_execute. A natural-language task for "
    "an isolated agent -> codex_exec with target managed_sandbox. A natural-language task that "
    "must act on a real host -> codex_exec with target private_ssh, which requires durable human "
    "approval. Connected-service inventory or catalog inspection is not an execution task. Do not "
    "choose between these tools from an approval label, a service identity or similar output "
    "fields; choose from the user's input and intended execution location.";

nlohmann::json CodeExecuteTool() {
  return {
      {"name", "code_execute"},
      {"capability_class", "PlatformBuiltIn"},
      {"description",
       std::string("Run an exact Python, JavaScript, TypeScript or Bash program that the caller "
                   "has already written, in an isolated one-shot sandbox (no network, bounded "
                   "time, memory and output), and return its stdout, stderr and exit code. Use it "
                   "only when the caller supplies the program; it is not a natural-language agent. "
                   "The sandbox bounds the program's effects; it does not make arbitrary code "
                   "deterministic, pure, successful or safe to run elsewhere. ") +
           kSelectionRules},
      {"approval", "none"},
      {"input_schema",
       {{"type", "object"},
        {"required", {"language", "source"}},
        {"additionalProperties", false},
        {"properties",
         {{"language",
           {{"type", "string"}, {"enum", {"python", "javascript", "typescript", "bash"}}}},
          {"source", {{"type", "string"}, {"minLength", 1}, {"description", "the exact program"}}},
          {"timeout_secs",
           {{"type", "integer"}, {"minimum", 1}, {"maximum", 600}, {"default", 180}}},
          {"stdin", {{"type", "string"}}},
          {"env",
           {{"type", "object"},
            {"additionalProperties", {{"type", "string"}}},
            {"description", "NAME=value pairs; NYXID_* and LD_* are reserved"}}}}}}},
  };
}

nlohmann::json CodexExecTool() {
  return {
      {"name", "codex_exec"},
      {"capability_class", "RolloutRestrictedPlatform"},
      {"description",
       std::string("Hand a natural-language task to the Codex agent. target managed_sandbox runs "
                   "it under the operator's fixed isolation in an empty Git workspace and needs no "
                   "human approval; target private_ssh runs it on the user's own host over a "
                   "pinned, forced-command SSH route and needs durable human approval of the "
                   "exact call. The approval requirement comes from the selected target. ") +
           kSelectionRules},
      // Static metadata fails closed; the admitted path resolves the target's own requirement.
      {"approval", "per_target"},
      {"input_schema",
       {{"type", "object"},
        {"required", {"task", "target"}},
        {"additionalProperties", false},
        {"properties",
         {{"task", {{"type", "string"}, {"minLength", 1}}},
          {"target", {{"type", "string"}, {"enum", {"managed_sandbox", "private_ssh"}}}},
          {"service",
           {{"type", "string"}, {"description", "private_ssh: the SSH service slug"}}}}}}},
  };
}

}  // namespace

nlohmann::json ToolCatalogJson() { return {{"tools", {CodeExecuteTool(), CodexExecTool()}}}; }

}  // namespace aevatar::orchestrator
