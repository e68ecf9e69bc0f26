#ifndef AEVATAR_OS_FSYNC_DIRECTORY_H_
#define AEVATAR_OS_FSYNC_DIRECTORY_H_

#include <string>

#include "absl/status/status.h"

namespace aevatar::os {

// fsyncs the directory `dir`, so that the names of files just created in it
// survive a power loss (WriteFileAtomically does this for its own file).
// Errors name the failing call and the directory. Defined in atomic_file.cc.
absl::Status FsyncDirectory(const std::string& dir);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_FSYNC_DIRECTORY_H_
