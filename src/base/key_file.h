#ifndef AEVATAR_BASE_KEY_FILE_H_
#define AEVATAR_BASE_KEY_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace aevatar::base {

// Returns the `bytes`-byte secret key stored at `path`, creating it from the
// CSPRNG (mode 0600, fsynced, O_EXCL so racing processes agree) when absent.
// DataLoss when the file exists with the wrong size.
absl::StatusOr<std::string> LoadOrCreateKeyFile(const std::string& path, size_t bytes);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_KEY_FILE_H_
