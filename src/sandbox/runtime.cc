#include "sandbox/runtime.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace aevatar::sandbox {

namespace {

RuntimePlan PlanDefaultRuntime(Language language) {
  const std::string dir = kWorkspaceDir;
  switch (language) {
    case Language::kPython:
      return {dir + "/main.py", {{"/usr/bin/python3", {"python3", "-I", dir + "/main.py"}}}, {}};
    case Language::kJavaScript:
      return {dir + "/main.js", {{"/usr/bin/node", {"node", dir + "/main.js"}}}, {}};
    case Language::kTypeScript:
      return {dir + "/main.ts",
              {{kEsbuildPath,
                {"esbuild", dir + "/main.ts", "--outfile=" + dir + "/.main.js", "--format=cjs",
                 "--platform=node", "--log-level=warning"}},
               {"/usr/bin/node", {"node", dir + "/.main.js"}}},
              {}};
    case Language::kBash:
      return {dir + "/main.sh", {{"/bin/bash", {"bash", dir + "/main.sh"}}}, {}};
  }
  return {};
}

}  // namespace

RuntimePlan PlanRuntime(Language language, const RuntimeEnv* env) {
  RuntimePlan plan = PlanDefaultRuntime(language);
  if (env == nullptr) return plan;
  const std::string sandbox_dir = absl::StrCat(kRuntimesDir, "/", env->name);
  plan.layout.host_root = env->root;
  plan.layout.sandbox_dir = sandbox_dir;
  switch (language) {
    case Language::kPython:
      // argv[0] is the full path: Python finds pyvenv.cfg beside it, and so
      // the runtime's site-packages instead of the system's.
      plan.stages[0].path = sandbox_dir + "/bin/python3";
      plan.stages[0].argv[0] = plan.stages[0].path;
      break;
    case Language::kJavaScript:
    case Language::kTypeScript:
      // Resolution walks up from /workspace/main.js to /node_modules.
      plan.layout.links.push_back({"/node_modules", sandbox_dir + "/node_modules"});
      break;
    case Language::kBash:
      break;  // PATH, in BuildProgramEnv
  }
  return plan;
}

std::vector<std::string> BuildProgramEnv(const RunSpec& spec, const RuntimeEnv* env) {
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  if (env != nullptr && env->language == Language::kBash) {
    path = absl::StrCat(kRuntimesDir, "/", env->name, "/bin:", path);
  }
  // std::map keeps the order stable and lets later sources override earlier.
  std::map<std::string, std::string> vars = {
      {"PATH", path},      {"HOME", kWorkspaceDir}, {"TMPDIR", "/tmp"},
      {"LANG", "C.UTF-8"}, {"USER", "sandbox"},
  };
  for (const EnvVar& var : spec.env) vars[var.name] = var.value;
  for (const EnvVar& var : spec.server_env) vars[var.name] = var.value;
  std::vector<std::string> envp;
  envp.reserve(vars.size());
  for (const auto& [name, value] : vars) envp.push_back(absl::StrCat(name, "=", value));
  return envp;
}

}  // namespace aevatar::sandbox
