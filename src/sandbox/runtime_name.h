#ifndef AEVATAR_SANDBOX_RUNTIME_NAME_H_
#define AEVATAR_SANDBOX_RUNTIME_NAME_H_

#include <string_view>

#include "absl/status/status.h"

// The rule for a runtime environment's name, in a library of its own so that
// aevatar's code_execute checks a caller's `runtime` exactly as the executor
// does without linking the sandbox engine.
namespace aevatar::sandbox {

// Returns InvalidArgument unless `name` is 1..64 characters of [a-z0-9._-]
// starting with a letter or digit.
absl::Status ValidateRuntimeName(std::string_view name);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_RUNTIME_NAME_H_
