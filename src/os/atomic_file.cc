#include "os/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "base/errno_error.h"
#include "os/fsync_directory.h"
#include "os/unique_fd.h"

namespace aevatar::os {
namespace {

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Reads `fd` to its end; OutOfRange past `max_bytes`.
absl::StatusOr<std::string> ReadAll(int fd, const std::string& path, size_t max_bytes) {
  std::string text(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoError("read " + path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return absl::OutOfRangeError(path + " is too large");
  text.resize(got);
  return text;
}

}  // namespace

absl::Status FsyncDirectory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoError("open " + dir, errno);
  if (::fsync(fd.get()) != 0) return base::ErrnoError("fsync " + dir, errno);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode,
                                 IfExists if_exists) {
  // A random suffix: two writers never share a temporary file.
  const std::string temp = absl::StrCat(path, ".tmp-", base::RandomId(""));
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd.valid()) return base::ErrnoError("create " + temp, errno);
  absl::Status written = WriteAll(fd.get(), bytes, temp);
  // fchmod: the umask may have narrowed `mode` at open.
  if (written.ok() && ::fchmod(fd.get(), mode) != 0)
    written = base::ErrnoError("chmod " + temp, errno);
  if (written.ok() && ::fsync(fd.get()) != 0) written = base::ErrnoError("fsync " + temp, errno);
  if (written.ok() && ::close(fd.release()) != 0)
    written = base::ErrnoError("close " + temp, errno);
  if (written.ok()) {
    unsigned flags = if_exists == IfExists::kFail ? RENAME_NOREPLACE : 0;
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), flags) != 0) {
      written = errno == EEXIST ? absl::AlreadyExistsError(path + " exists")
                                : base::ErrnoError("rename " + temp, errno);
    }
  }
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  return FsyncDirectory(DirectoryOf(path));
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return base::ErrnoError("open " + path, errno);
  return ReadAll(fd.get(), path, max_bytes);
}

absl::StatusOr<std::string> ReadPrivateFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return base::ErrnoError("open " + path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(path + " is not a regular file");
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(path + " is open to group or others; chmod 600 it");
  }
  return ReadAll(fd.get(), path, max_bytes);
}

absl::Status MakeDirectories(const std::string& path, mode_t mode) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    const std::string partial = path.substr(0, i);
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return base::ErrnoError("mkdir " + partial, errno);
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return base::ErrnoError("stat " + path, errno);
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(path + " is not a directory");
  return absl::OkStatus();
}

absl::StatusOr<std::string> LoadOrCreateKeyFile(const std::string& path, size_t bytes) {
  auto existing = ReadSmallFile(path, bytes);
  if (!existing.ok() && absl::IsNotFound(existing.status())) {
    absl::Status created =
        WriteFileAtomically(path, base::RandomBytes(bytes), 0600, IfExists::kFail);
    // AlreadyExists: another process won the race; its key is the key.
    if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
    existing = ReadSmallFile(path, bytes);
  }
  if (!existing.ok()) {
    if (absl::IsOutOfRange(existing.status()))
      return absl::DataLossError(path + " is not a valid key");
    return existing.status();
  }
  if (existing->size() != bytes) return absl::DataLossError(path + " is not a valid key");
  return existing;
}

}  // namespace aevatar::os
