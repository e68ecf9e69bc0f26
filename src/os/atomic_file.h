#ifndef AEVATAR_OS_ATOMIC_FILE_H_
#define AEVATAR_OS_ATOMIC_FILE_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Files that must never be seen half-written: secrets, sessions, keys.
namespace aevatar::os {

// Whether WriteFileAtomically may replace an existing file.
enum class IfExists { kReplace, kFail };

// Writes `bytes` to `path` so that a reader sees either the old file or the
// whole new one, even across a crash: a temporary file beside `path` (created
// with `mode` before any byte is written, O_NOFOLLOW), write, fsync, rename
// over `path`, fsync of the directory. With IfExists::kFail an existing `path`
// is left alone and the result is AlreadyExists (racing writers agree on one
// winner). Errors name the failing call and its path.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode,
                                 IfExists if_exists = IfExists::kReplace);

// Reads at most `max_bytes` of `path` (not following a final symlink).
// NotFound when absent; OutOfRange when the file is longer.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

// Like ReadSmallFile, for a secret: FailedPrecondition unless `path` is a
// regular file that group and others cannot read or write (the error says
// how to fix the mode).
absl::StatusOr<std::string> ReadPrivateFile(const std::string& path, size_t max_bytes);

// Creates `path` and its missing parents with `mode` (like mkdir -p); an
// existing directory is fine and keeps its mode.
absl::Status MakeDirectories(const std::string& path, mode_t mode);

// Returns the `bytes`-byte secret key stored at `path`, creating it from the
// CSPRNG (0600, written atomically) when absent; racing processes agree on
// one key. DataLoss when the file exists with the wrong size.
absl::StatusOr<std::string> LoadOrCreateKeyFile(const std::string& path, size_t bytes);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_ATOMIC_FILE_H_
