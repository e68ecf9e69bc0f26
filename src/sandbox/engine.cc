#include "sandbox/engine.h"

#include <unistd.h>

#include "sandbox/gvisor_backend.h"
#include "sandbox/native_backend.h"
#include "sandbox/validation.h"

namespace aevatar::sandbox {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const EngineOptions& options) {
  auto native = NativeBackend::Create(options.prepared_namespaces);
  if (!native.ok()) return native.status();
  std::unique_ptr<Backend> gvisor;
  if (::access(options.runsc_path.c_str(), X_OK) == 0) {
    auto created = GvisorBackend::Create(options.runsc_path);
    if (!created.ok()) return created.status();
    gvisor = std::move(*created);
  }
  return std::unique_ptr<Engine>(new Engine(options, std::move(*native), std::move(gvisor)));
}

Engine::Engine(EngineOptions options, std::unique_ptr<Backend> native,
               std::unique_ptr<Backend> gvisor)
    : options_(std::move(options)), native_(std::move(native)), gvisor_(std::move(gvisor)) {}

absl::StatusOr<RunResult> Engine::Run(const RunSpec& spec, const RunControl& control) {
  if (auto st = ValidateLimits(spec.limits, options_.max_limits); !st.ok()) return st;
  if (auto st = ValidateCallerEnv(spec.env); !st.ok()) return st;
  Backend* backend = spec.backend == BackendKind::kNative ? native_.get() : gvisor_.get();
  if (backend == nullptr) {
    return absl::FailedPreconditionError("the gvisor backend needs runsc, which is not installed");
  }
  PreparedRun prepared{&spec, PlanRuntime(spec.language), BuildProgramEnv(spec)};
  return backend->Run(prepared, control);
}

}  // namespace aevatar::sandbox
