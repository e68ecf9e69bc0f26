#include "base/key_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/crypto.h"
#include "base/errno_error.h"

namespace aevatar::base {
namespace {

absl::StatusOr<std::string> ReadKey(const std::string& path, size_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ErrnoError("open " + path, errno);
  std::string key(bytes + 1, '\0');
  ssize_t n = ::read(fd, key.data(), key.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(bytes)) return absl::DataLossError(path + " is not a valid key");
  key.resize(bytes);
  return key;
}

}  // namespace

absl::StatusOr<std::string> LoadOrCreateKeyFile(const std::string& path, size_t bytes) {
  auto existing = ReadKey(path, bytes);
  if (existing.ok() || !absl::IsNotFound(existing.status())) return existing;
  std::string key = RandomBytes(bytes);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return ReadKey(path, bytes);  // another process won the race
    return ErrnoError("create " + path, errno);
  }
  bool ok =
      ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return absl::InternalError("could not write " + path);
  return key;
}

}  // namespace aevatar::base
