#include "aevatar/admission/tool_catalog.h"

#include "aevatar/codex/codex_exec_args.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kCodexCapabilityClassName[] = "RolloutRestrictedPlatform";

constexpr char kSelectionRules[] =
    "Selection rules: exact source code to execute -> code_execute. A natural-language task for "
    "an isolated agent -> codex_exec with target managed_sandbox. A natural-language task that "
    "must act on a real host -> codex_exec with target private_ssh, which requires durable human "
    "approval. Connected-service inventory or catalog inspection is not an execution task. Do not "
    "choose between these tools from an approval label, a service identity or similar output "
    "fields; choose from the user's input and intended execution location.";

// The `runtime` argument: the offered names, or any name when none is
// advertised (the executor decides).
nlohmann::json RuntimeProperty(const std::vector<RuntimeOffer>& runtimes) {
  std::string description =
      "A runtime environment of the operator's for the chosen language (its libraries, mounted "
      "read-only); leave it out for the language's default, which has the standard library "
      "only.";
  nlohmann::json property = {{"type", "string"}, {"minLength", 1}, {"maxLength", 64}};
  if (!runtimes.empty()) {
    description += " Offered:";
    nlohmann::json names = nlohmann::json::array();
    for (const RuntimeOffer& offer : runtimes) {
      description += " " + offer.name + " (" + offer.language + ")";
      names.push_back(offer.name);
    }
    property["enum"] = names;
  }
  property["description"] = description;
  return property;
}

nlohmann::json CodeExecuteTool(const std::vector<RuntimeOffer>& runtimes) {
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
      {"runtimes", RuntimeOffersJson(runtimes)},
      {"input_schema",
       {{"type", "object"},
        {"required", {"language", "source"}},
        {"additionalProperties", false},
        {"properties",
         {{"language",
           {{"type", "string"}, {"enum", {"python", "javascript", "typescript", "bash"}}}},
          {"source", {{"type", "string"}, {"minLength", 1}, {"description", "the exact program"}}},
          {"runtime", RuntimeProperty(runtimes)},
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
      {"capability_class", kCodexCapabilityClassName},
      {"rollout_boundary", "InternalOnly"},
      {"description",
       std::string(
           "Delegate a natural-language task to the Codex agent; it interprets and carries out the "
           "task and returns its final answer. target managed_sandbox (with workspace kind "
           "empty_git) runs it one-shot under the operator's fixed isolation in a fresh, empty Git "
           "workspace: the caller cannot choose a repository, path, image, model, provider, "
           "credential, shell, Codex profile, approval policy or sandbox flags, and this target "
           "needs no human approval. target private_ssh (nested private_ssh {service, principal}, "
           "no workspace) runs it on the user's own host through a NyxID SSH route and needs "
           "durable human approval of the exact call. Never mix the two shapes. The approval "
           "requirement is resolved from the selected target, not from this description. ") +
           kSelectionRules},
      // Static metadata fails closed: the admitted path resolves the
      // selected target's own requirement (managed_sandbox needs none).
      {"approval", "required"},
      {"approval_by_target", {{"managed_sandbox", "none"}, {"private_ssh", "durable_human"}}},
      {"input_schema", CodexExecInputSchema()},
  };
}

}  // namespace

nlohmann::json ToolCatalogJson(const std::vector<RuntimeOffer>& runtimes) {
  return {{"tools", {CodeExecuteTool(runtimes), CodexExecTool()}}};
}

nlohmann::json RuntimeOffersJson(const std::vector<RuntimeOffer>& runtimes) {
  nlohmann::json list = nlohmann::json::array();
  for (const RuntimeOffer& offer : runtimes) {
    list.push_back({{"name", offer.name}, {"language", offer.language}});
  }
  return list;
}

}  // namespace aevatar::orchestrator
