#include "os/cgroup_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/errno_error.h"

namespace aevatar::os::cgroup_files {

using base::ErrnoError;

namespace {

// One write of `value` at offset 0: what a cgroup control file takes.
absl::Status WriteAt0(int fd, const std::string& path, std::string_view value) {
  if (::pwrite(fd, value.data(), value.size(), 0) != static_cast<ssize_t>(value.size())) {
    return ErrnoError("write " + path, errno);
  }
  return absl::OkStatus();
}

// The whole content from offset 0 (a cgroup file regenerates it on each read).
absl::StatusOr<std::string> ReadFrom0(int fd, const std::string& path) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), static_cast<off_t>(text.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read " + path, errno);
    }
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

absl::StatusOr<UniqueFd> Open(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("open " + path, errno);
  return fd;
}

absl::StatusOr<uint64_t> ParseNumber(const std::string& path, std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return absl::InternalError("unexpected content in " + path);
  return value;
}

uint64_t ParseKeyed(const std::string& text, std::string_view key) {
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(text, '\n'))) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() == 2 && parts[0] == key) {
      uint64_t value = 0;
      if (absl::SimpleAtoi(parts[1], &value)) return value;
    }
  }
  return 0;
}

}  // namespace

absl::Status WriteFile(const std::string& path, std::string_view value) {
  auto fd = Open(path, O_WRONLY);
  if (!fd.ok()) return fd.status();
  return WriteAt0(fd->get(), path, value);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  auto fd = Open(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  return ReadFrom0(fd->get(), path);
}

absl::StatusOr<int> OpenFiles::Fd(const std::string& path, int flags) {
  auto it = fds_.find({path, flags});
  if (it == fds_.end()) {
    auto opened = Open(path, flags);
    if (!opened.ok()) return opened.status();
    it = fds_.emplace(std::pair{path, flags}, std::move(*opened)).first;
  }
  return it->second.get();
}

absl::Status OpenFiles::Write(const std::string& path, std::string_view value) {
  auto fd = Fd(path, O_WRONLY);
  if (!fd.ok()) return fd.status();
  return WriteAt0(*fd, path, value);
}

absl::StatusOr<std::string> OpenFiles::Read(const std::string& path) {
  auto fd = Fd(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  return ReadFrom0(*fd, path);
}

absl::StatusOr<uint64_t> OpenFiles::ReadNumber(const std::string& path) {
  auto text = Read(path);
  if (!text.ok()) return text.status();
  return ParseNumber(path, std::move(*text));
}

absl::StatusOr<uint64_t> OpenFiles::ReadKeyed(const std::string& path, std::string_view key) {
  auto text = Read(path);
  if (!text.ok()) return text.status();
  return ParseKeyed(*text, key);
}

absl::StatusOr<int> OpenFiles::WriteFd(const std::string& path) { return Fd(path, O_WRONLY); }

absl::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return ErrnoError("mkdir " + path, errno);
  return absl::OkStatus();
}

absl::Status RemoveDir(const std::string& path) {
  for (int attempt = 0;; ++attempt) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
    if (errno != EBUSY || attempt >= 200) return ErrnoError("rmdir " + path, errno);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int RemoveStaleRunDirs(const std::string& parent, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || name.rfind(prefix, 0) != 0) continue;
    const size_t dash = name.find('-', prefix.size());
    int pid = 0;
    if (dash == std::string::npos ||
        !absl::SimpleAtoi(name.substr(prefix.size(), dash - prefix.size()), &pid) || pid <= 0) {
      continue;
    }
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its owner still runs
    if (::rmdir(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

absl::StatusOr<std::vector<CgroupMount>> ListCgroupMounts() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return absl::FailedPreconditionError("cannot read /proc/self/mountinfo");
  std::vector<CgroupMount> mounts;
  std::string line;
  // Format: id parent major:minor root mount_point options [optional...] - fstype source super
  while (std::getline(in, line)) {
    if (line.find(" - cgroup") == std::string::npos) continue;  // most lines; skip the split
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    size_t dash = 0;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 5 || dash + 2 >= fields.size()) continue;
    const std::string& fstype = fields[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    mounts.push_back({fstype, fields[4], dash + 3 < fields.size() ? fields[dash + 3] : ""});
  }
  return mounts;
}

}  // namespace aevatar::os::cgroup_files
