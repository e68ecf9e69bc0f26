#include "sandbox/engine.h"

#include <unistd.h>

#include "os/process.h"
#include "sandbox/gvisor_backend.h"
#include "sandbox/native_backend.h"
#include "sandbox/validation.h"

namespace aevatar::sandbox {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineOptions& options) {
  if (absl::Status st = CheckRuntimes(options.runtimes); !st.ok()) return st;
  if (options.warm_python > 0) {
    if (auto st = ValidateLimits(options.warm_python_limits, options.max_limits); !st.ok()) {
      return st;
    }
  }
  auto native =
      NativeBackend::Create(options.prepared_namespaces, options.one_shot, options.init_path);
  if (!native.ok()) return native.status();
  auto engine = std::unique_ptr<Engine>(
      new Engine(options, std::move(*native), HiddenLibraryDirs(), LibraryAlternatives()));
  if (options.warm_python > 0 && !options.one_shot) {
    RunSpec profile;
    profile.language = Language::kPython;
    profile.limits = options.warm_python_limits;
    engine->native_->KeepPythonWarm(
        engine->Prepare(profile, PlanRuntime(Language::kPython), nullptr), options.warm_python);
  }
  return engine;
}

Engine::~Engine() = default;

Engine::Engine(EngineOptions options, std::unique_ptr<NativeBackend> native,
               std::vector<std::string> hidden_dirs, std::vector<AlternativeLink> alternatives)
    : options_(std::move(options)),
      native_(std::move(native)),
      hidden_dirs_(std::move(hidden_dirs)),
      alternatives_(std::move(alternatives)),
      typescript_(options_.typescript_cache_bytes > 0 && !options_.one_shot
                      ? std::make_unique<TypeScriptCompiler>(options_.typescript_cache_bytes,
                                                             options_.max_limits)
                      : nullptr) {}

TranspileCache::Stats Engine::typescript_cache_stats() const {
  return typescript_ ? typescript_->cache_stats() : TranspileCache::Stats{};
}

WarmPythonStats Engine::warm_python_stats() const { return native_->warm_stats(); }

bool Engine::FitsWarmPython(const RunSpec& spec) const {
  return spec.backend == BackendKind::kNative && spec.language == Language::kPython &&
         native_->FitsWarm(Prepare(spec, PlanRuntime(Language::kPython), nullptr), -1);
}

absl::StatusOr<Backend*> Engine::Gvisor() {
  absl::MutexLock lock(&gvisor_mu_);
  if (gvisor_) return gvisor_.get();
  if (!os::IsExecutable(options_.runsc_path)) {
    return absl::FailedPreconditionError("the gvisor backend needs runsc, which is not installed");
  }
  auto created = GvisorBackend::Create(options_.runsc_path);
  if (!created.ok()) return created.status();
  gvisor_ = std::move(*created);
  return gvisor_.get();
}

absl::StatusOr<RunResult> Engine::Run(const RunSpec& spec, const RunControl& control) {
  if (auto st = ValidateLimits(spec.limits, options_.max_limits); !st.ok()) return st;
  if (auto st = ValidateCallerEnv(spec.env); !st.ok()) return st;
  if (auto st = ValidateServerFiles(spec.server_files); !st.ok()) return st;
  if (auto st = ValidateMemoryDirs(spec.memory_dirs); !st.ok()) return st;
  auto env = ResolveRuntime(options_.runtimes, spec.language, spec.runtime);
  if (!env.ok()) return env.status();
  Backend* backend = native_.get();
  if (spec.backend == BackendKind::kGvisor) {
    if (*env != nullptr) {
      return absl::InvalidArgumentError("runtime environments run on the native backend only");
    }
    auto gvisor = Gvisor();
    if (!gvisor.ok()) return gvisor.status();
    backend = *gvisor;
  }
  if (spec.language == Language::kTypeScript && typescript_) {
    return RunTypeScript(backend, spec, *env, control);
  }
  return RunPlanned(backend, spec, PlanRuntime(spec.language, *env), *env, control);
}

absl::StatusOr<RunResult> Engine::RunPlanned(Backend* backend, const RunSpec& spec,
                                             RuntimePlan plan, const RuntimeEnv* env,
                                             const RunControl& control) {
  return backend->Run(Prepare(spec, std::move(plan), env), control);
}

PreparedRun Engine::Prepare(const RunSpec& spec, RuntimePlan plan, const RuntimeEnv* env) const {
  PreparedRun prepared{&spec, std::move(plan), BuildProgramEnv(spec, env)};
  prepared.runtime.layout.hidden_dirs = hidden_dirs_;
  for (const AlternativeLink& link : alternatives_) {
    prepared.runtime.layout.links.push_back({link.path, link.target});
  }
  return prepared;
}

absl::StatusOr<RunResult> Engine::RunTypeScript(Backend* backend, const RunSpec& spec,
                                                const RuntimeEnv* env, const RunControl& control) {
  // The compile shares the caller's cancellation, never its network
  // namespace (e.g. a relay's): it gets a fresh empty one.
  const RunControl compile_control{control.cancel_fd, -1};
  auto compiled = typescript_->Compile(spec.source, spec.limits.wall_timeout_secs,
                                       [&](const RunSpec& compile_spec, RuntimePlan plan) {
                                         return RunPlanned(backend, compile_spec, std::move(plan),
                                                           nullptr, compile_control);
                                       });
  if (!compiled.ok()) return compiled.status();
  if (compiled->program == nullptr) return UnfinishedCompileResult(std::move(*compiled->run));
  const TranspiledProgram& program = *compiled->program;
  if (!program.compiled) return CompileErrorResult(program, compiled->run, spec.limits);

  RunSpec javascript = spec;
  javascript.language = Language::kJavaScript;
  javascript.source = program.javascript;
  if (compiled->run.has_value()) {
    javascript.limits.wall_timeout_secs =
        RemainingWallTimeoutSecs(spec.limits.wall_timeout_secs, compiled->run->wall_ms);
  }
  // `env` is a TypeScript runtime; its layout (node_modules) is JavaScript's.
  auto result =
      RunPlanned(backend, javascript, PlanRuntime(Language::kJavaScript, env), env, control);
  if (!result.ok()) return result.status();
  MergeCompileIntoResult(program, compiled->run, spec.limits, *result);
  return result;
}

}  // namespace aevatar::sandbox
