#include "sandbox/gvisor_backend.h"

namespace aevatar::sandbox {

absl::StatusOr<std::unique_ptr<GvisorBackend>> GvisorBackend::Create(
    const std::string& runsc_path) {
  return std::unique_ptr<GvisorBackend>(new GvisorBackend(runsc_path));
}

absl::StatusOr<RunResult> GvisorBackend::Run(const PreparedRun&, const RunControl&) {
  return absl::UnimplementedError("gvisor backend: not yet implemented");
}

}  // namespace aevatar::sandbox
