#ifndef AEVATAR_SANDBOX_GVISOR_BACKEND_H_
#define AEVATAR_SANDBOX_GVISOR_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "sandbox/backend.h"

namespace aevatar::sandbox {

// Runs a PreparedRun under gVisor's runsc (ptrace platform, no network) from
// a generated OCI bundle, with the same limits as the native backend.
class GvisorBackend : public Backend {
 public:
  static absl::StatusOr<std::unique_ptr<GvisorBackend>> Create(const std::string& runsc_path);

  std::string_view name() const override { return "gvisor"; }
  absl::StatusOr<RunResult> Run(const PreparedRun& run, const RunControl& control) override;

 private:
  explicit GvisorBackend(std::string runsc_path) : runsc_path_(std::move(runsc_path)) {}
  const std::string runsc_path_;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_GVISOR_BACKEND_H_
