#ifndef AEVATAR_SANDBOX_ENGINE_H_
#define AEVATAR_SANDBOX_ENGINE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "sandbox/backend.h"
#include "sandbox/run_spec.h"
#include "sandbox/runner.h"
#include "sandbox/runtime_env.h"
#include "sandbox/typescript_compiler.h"
#include "sandbox/warm_python.h"

namespace aevatar::sandbox {

class NativeBackend;

struct EngineOptions {
  // Operator-set maxima; a run's limits may not exceed them.
  Limits max_limits = {
      .wall_timeout_secs = 600,
      .cpu_secs = 600,
      .memory_bytes = 4ull << 30,
      .max_pids = 1024,
      .max_output_bytes = 16ull << 20,
      .max_file_bytes = 1ull << 30,
      .tmpfs_bytes = 1ull << 30,
      .max_open_files = 4096,
  };
  // Network namespaces the native backend keeps ready (see NetnsPool).
  size_t prepared_namespaces = 4;
  // For a process that runs one program and exits (`chrono-sandbox run`):
  // exactly one network namespace is made, on a thread, while the engine
  // finishes its set-up (no refill); run cgroups are shared with other such
  // processes instead of made and removed per run (os::ClaimSharedCgroup);
  // stale run cgroups are left for the next service start to sweep.
  bool one_shot = false;
  // The sandbox init executable; empty: chrono-sandbox-init beside the
  // running executable (build/bin, or wherever the binaries are installed).
  std::string init_path;
  // The gVisor runtime; the gvisor backend is unavailable when it is missing.
  std::string runsc_path = "/usr/bin/runsc";
  // Operator-declared runtime environments a run may choose by name
  // (RunSpec::runtime); checked by Create (CheckRuntimes). Native backend
  // only.
  std::vector<RuntimeEnv> runtimes;
  // Bytes of compiled TypeScript kept in memory (typescript_compiler.h): a
  // TypeScript run compiles in a sandbox of its own once per distinct source,
  // then runs as JavaScript. 0 (and every one-shot engine): esbuild runs as
  // the first stage of each run's own sandbox instead.
  size_t typescript_cache_bytes = 32ull << 20;
  // Python sandboxes kept started ahead of time (warm_python.h): a Python
  // run in the default runtime with exactly `warm_python_limits`, no server
  // files or memory dirs and no given network namespace takes one and skips
  // the sandbox's set-up and the interpreter's start-up. Each holds an init,
  // an idle interpreter (~10 MiB) and a run cgroup. 0 (and every one-shot
  // engine): none. An operator opt-in (`chrono-sandbox serve --warm-python`).
  size_t warm_python = 0;
  Limits warm_python_limits;
};

// The isolation engine's one entry point: RunSpec -> RunResult, or a Status
// error. InvalidArgument means the spec was rejected before anything ran;
// any other error means the sandbox itself failed (never the program).
// Thread-safe: runs may proceed concurrently from several threads. Each run
// must be driven by a thread that outlives it (the sandbox dies with the
// thread that started it).
class Engine : public Runner {
 public:
  // Creates the native backend (fails closed when it cannot isolate) after
  // checking the declared runtimes (an unusable root is FailedPrecondition
  // naming it). The
  // gvisor backend is set up on its first run (FailedPrecondition then when
  // runsc is missing), so native-only users never pay for it.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(const EngineOptions& options = {});
  ~Engine() override;

  absl::StatusOr<RunResult> Run(const RunSpec& spec, const RunControl& control = {}) override;

  const EngineOptions& options() const { return options_; }
  // The TypeScript cache's counters; zero when it is off.
  TranspileCache::Stats typescript_cache_stats() const;
  // The warm Python sandboxes' counters; zero when there are none.
  WarmPythonStats warm_python_stats() const;
  // Whether a run of `spec` with no given network namespace takes a warm
  // Python sandbox when one is ready.
  bool FitsWarmPython(const RunSpec& spec) const;

 private:
  Engine(EngineOptions options, std::unique_ptr<NativeBackend> native,
         std::vector<std::string> hidden_dirs, std::vector<AlternativeLink> alternatives);
  // `spec` as the backend gets it: `plan` with the engine's layout added.
  PreparedRun Prepare(const RunSpec& spec, RuntimePlan plan, const RuntimeEnv* env) const;
  absl::StatusOr<Backend*> Gvisor();
  // Runs `plan` for `spec` on `backend` with the engine's layout added.
  absl::StatusOr<RunResult> RunPlanned(Backend* backend, const RunSpec& spec, RuntimePlan plan,
                                       const RuntimeEnv* env, const RunControl& control);
  // A TypeScript run through the compiler: compile (or the cache), then the
  // JavaScript on `backend`.
  absl::StatusOr<RunResult> RunTypeScript(Backend* backend, const RunSpec& spec,
                                          const RuntimeEnv* env, const RunControl& control);

  const EngineOptions options_;
  const std::unique_ptr<NativeBackend> native_;
  const std::vector<std::string> hidden_dirs_;       // HiddenLibraryDirs() at creation
  const std::vector<AlternativeLink> alternatives_;  // LibraryAlternatives() at creation
  absl::Mutex gvisor_mu_;
  std::unique_ptr<Backend> gvisor_ ABSL_GUARDED_BY(gvisor_mu_);  // made on first use
  const std::unique_ptr<TypeScriptCompiler> typescript_;         // null: compile in the run
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_ENGINE_H_
