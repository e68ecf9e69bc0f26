#ifndef AEVATAR_SANDBOX_RUNTIME_H_
#define AEVATAR_SANDBOX_RUNTIME_H_

#include <string>
#include <vector>

#include "sandbox/run_spec.h"
#include "sandbox/runtime_env.h"

namespace aevatar::sandbox {

// Where sources live inside the sandbox.
inline constexpr char kWorkspaceDir[] = "/workspace";
// The TypeScript compiler (Debian's esbuild), run in a sandbox.
inline constexpr char kEsbuildPath[] = "/usr/bin/esbuild";

// One program a run executes; stages run in order and the first failing stage
// ends the run (TypeScript: compile, then run).
struct RuntimeStage {
  std::string path;               // absolute path of the executable (read-only host path)
  std::vector<std::string> argv;  // argv[0] included; the source is a file path, never code
};

// What a run's filesystem holds for its runtime environment (runtime_env.h).
struct RuntimeLayout {
  std::string host_root;    // the chosen runtime's root; empty: the default runtime
  std::string sandbox_dir;  // where host_root is bound read-only (kRuntimesDir/NAME)
  struct Link {
    std::string path;    // absolute; its parent directories are made
    std::string target;  // what it points to
  };
  // e.g. /node_modules -> sandbox_dir/node_modules; the engine adds the
  // LibraryAlternatives to every run's.
  std::vector<Link> links;
  // Host library directories each covered by an empty read-only tmpfs
  // (HiddenLibraryDirs); filled in by the engine.
  std::vector<std::string> hidden_dirs;
};

struct RuntimePlan {
  std::string source_path;  // absolute path inside the sandbox the source is written to
  std::vector<RuntimeStage> stages;
  RuntimeLayout layout;
};

// Returns how `language` runs: python -> /usr/bin/python3 -I, javascript ->
// /usr/bin/node, typescript -> /usr/bin/esbuild to JavaScript then node,
// bash -> /bin/bash. With `env` (a runtime of this language), python runs
// the runtime's bin/python3 -I instead, and the layout binds the runtime's
// root and links /node_modules for javascript and typescript.
RuntimePlan PlanRuntime(Language language, const RuntimeEnv* env = nullptr);

// The program's environment: a fixed baseline (PATH, HOME, TMPDIR, LANG; a
// bash runtime's bin/ first on PATH), then the caller's variables, then the
// server's (which win). Nothing of the service's own environment is included.
std::vector<std::string> BuildProgramEnv(const RunSpec& spec, const RuntimeEnv* env = nullptr);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUNTIME_H_
