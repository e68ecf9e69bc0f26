#include "sandbox/runtime.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace aevatar::sandbox {

RuntimePlan PlanRuntime(Language language) {
  const std::string dir = kWorkspaceDir;
  switch (language) {
    case Language::kPython:
      return {dir + "/main.py", {{"/usr/bin/python3", {"python3", "-I", dir + "/main.py"}}}};
    case Language::kJavaScript:
      return {dir + "/main.js", {{"/usr/bin/node", {"node", dir + "/main.js"}}}};
    case Language::kTypeScript:
      return {dir + "/main.ts",
              {{"/usr/bin/esbuild",
                {"esbuild", dir + "/main.ts", "--outfile=" + dir + "/.main.js", "--format=cjs",
                 "--platform=node", "--log-level=warning"}},
               {"/usr/bin/node", {"node", dir + "/.main.js"}}}};
    case Language::kBash:
      return {dir + "/main.sh", {{"/bin/bash", {"bash", dir + "/main.sh"}}}};
  }
  return {};
}

std::vector<std::string> BuildProgramEnv(const RunSpec& spec) {
  // std::map keeps the order stable and lets later sources override earlier.
  std::map<std::string, std::string> vars = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", kWorkspaceDir},
      {"TMPDIR", "/tmp"},
      {"LANG", "C.UTF-8"},
      {"USER", "sandbox"},
  };
  for (const EnvVar& var : spec.env) vars[var.name] = var.value;
  for (const EnvVar& var : spec.server_env) vars[var.name] = var.value;
  std::vector<std::string> envp;
  envp.reserve(vars.size());
  for (const auto& [name, value] : vars) envp.push_back(absl::StrCat(name, "=", value));
  return envp;
}

}  // namespace aevatar::sandbox
