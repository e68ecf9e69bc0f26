#ifndef AEVATAR_SANDBOX_RUNTIME_H_
#define AEVATAR_SANDBOX_RUNTIME_H_

#include <string>
#include <vector>

#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// Where sources live inside the sandbox.
inline constexpr char kWorkspaceDir[] = "/workspace";

// One program a run executes; stages run in order and the first failing stage
// ends the run (TypeScript: compile, then run).
struct RuntimeStage {
  std::string path;               // absolute path of the executable (read-only host path)
  std::vector<std::string> argv;  // argv[0] included; the source is a file path, never code
};

struct RuntimePlan {
  std::string source_path;  // absolute path inside the sandbox the source is written to
  std::vector<RuntimeStage> stages;
};

// Returns how `language` runs: python -> /usr/bin/python3 -I, javascript ->
// /usr/bin/node, typescript -> /usr/bin/esbuild to JavaScript then node,
// bash -> /bin/bash.
RuntimePlan PlanRuntime(Language language);

// The program's environment: a fixed baseline (PATH, HOME, TMPDIR, LANG), then
// the caller's variables, then the server's (which win). Nothing of the
// service's own environment is included.
std::vector<std::string> BuildProgramEnv(const RunSpec& spec);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUNTIME_H_
