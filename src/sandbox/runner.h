#ifndef AEVATAR_SANDBOX_RUNNER_H_
#define AEVATAR_SANDBOX_RUNNER_H_

#include "absl/status/statusor.h"
#include "sandbox/backend.h"
#include "sandbox/run_spec.h"

namespace aevatar::sandbox {

// What runs one program for a caller: the Engine, or a test double of it
// (the executor's tests run against one). Implementations are thread-safe.
class Runner {
 public:
  virtual ~Runner() = default;
  // Runs `spec`; limits hit are verdicts, a failure of the sandbox itself is
  // an error (see Engine::Run). A readable `control.cancel_fd` kills the run.
  virtual absl::StatusOr<RunResult> Run(const RunSpec& spec, const RunControl& control) = 0;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUNNER_H_
