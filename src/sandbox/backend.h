#ifndef AEVATAR_SANDBOX_BACKEND_H_
#define AEVATAR_SANDBOX_BACKEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/run_spec.h"
#include "sandbox/runtime.h"

namespace aevatar::sandbox {

// A run that passed validation, with its runtime and environment resolved.
struct PreparedRun {
  const RunSpec* spec;
  RuntimePlan runtime;
  std::vector<std::string> envp;
};

// Caller-side controls of one run.
struct RunControl {
  int cancel_fd = -1;  // optional; readable means "kill the run now"
  // Optional: a network namespace (loopback up, e.g. os::MakeNetnsListener's)
  // the run joins instead of a fresh empty one; the caller keeps owning it.
  // The gvisor backend then runs its sandbox on that namespace's stack
  // (runsc --network=host inside it) instead of gVisor's empty one.
  int netns_fd = -1;
};

// One isolation technology. Run() carries out `run` and returns its result
// (limits hit are verdicts), or an error when the sandbox itself failed.
// Implementations are thread-safe: several runs may proceed at once.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<RunResult> Run(const PreparedRun& run, const RunControl& control) = 0;
};

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_BACKEND_H_
