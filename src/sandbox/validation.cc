#include "sandbox/validation.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sandbox/rootfs_plan.h"

namespace aevatar::sandbox {
namespace {

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

absl::Status ValidateCallerEnv(const std::vector<EnvVar>& env) {
  if (env.size() > kMaxEnvVars) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxEnvVars, " env variables"));
  }
  size_t bytes = 0;
  for (const EnvVar& var : env) {
    if (!IsValidName(var.name)) {
      return absl::InvalidArgumentError("env variable names must match [A-Za-z_][A-Za-z0-9_]*");
    }
    if (absl::StartsWithIgnoreCase(var.name, "NYXID_")) {
      return absl::InvalidArgumentError(
          absl::StrCat("env variable ", var.name, " is reserved for the server"));
    }
    if (absl::StartsWith(var.name, "LD_")) {
      return absl::InvalidArgumentError(
          absl::StrCat("env variable ", var.name, " (dynamic loader control) is not allowed"));
    }
    if (var.value.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("env variable ", var.name, " has a NUL byte in its value"));
    }
    bytes += var.name.size() + var.value.size() + 2;
  }
  if (bytes > kMaxEnvBytes) {
    return absl::InvalidArgumentError(absl::StrCat("env is larger than ", kMaxEnvBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateServerFiles(const std::vector<ServerFile>& files) {
  for (const ServerFile& file : files) {
    if (file.contents != nullptr) {
      if (!file.host_path.empty()) {
        return absl::InvalidArgumentError("a server file has either a host path or contents");
      }
    } else if (file.host_path.empty() || file.host_path[0] != '/') {
      return absl::InvalidArgumentError("a server file's host path must be absolute");
    } else if (absl::StartsWith(file.host_path, absl::StrCat(kRootMountPoint, "/"))) {
      // The native backend mounts the new root over /tmp before the binds.
      return absl::InvalidArgumentError("a server file's host path must not lie under /tmp");
    }
    const std::string_view path = file.sandbox_path;
    if (path.size() <= 5 || path.substr(0, 5) != "/opt/") {
      return absl::InvalidArgumentError("a server file must be placed under /opt/");
    }
    // "/opt/a/b" -> segments "opt", "a", "b"; a trailing '/' makes an empty one.
    for (size_t begin = 1; begin <= path.size();) {
      const size_t end = std::min(path.find('/', begin), path.size());
      const std::string_view segment = path.substr(begin, end - begin);
      if (segment.empty() || segment == "." || segment == "..") {
        return absl::InvalidArgumentError("a server file's sandbox path must be normal");
      }
      begin = end + 1;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMemoryDirs(const std::vector<std::string>& names) {
  if (names.size() > kMaxMemoryDirs) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxMemoryDirs, " memory dirs"));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    });
    if (name.empty() || name.size() > 64 || !plain || name == "." || name == "..") {
      return absl::InvalidArgumentError("a memory dir must be a plain name in /workspace");
    }
    if (std::find(names.begin(), names.begin() + i, name) != names.begin() + i) {
      return absl::InvalidArgumentError("memory dirs must be distinct");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateLimits(const Limits& limits, const Limits& maxima) {
  if (limits.wall_timeout_secs < kMinWallTimeoutSecs ||
      limits.wall_timeout_secs > std::min(kMaxWallTimeoutSecs, maxima.wall_timeout_secs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeout must be between ", kMinWallTimeoutSecs, " and ",
                     std::min(kMaxWallTimeoutSecs, maxima.wall_timeout_secs), " seconds"));
  }
  auto check = [](bool ok, std::string_view what, uint64_t min, uint64_t max) {
    return ok ? absl::OkStatus()
              : absl::InvalidArgumentError(
                    absl::StrCat(std::string(what), " must be between ", min, " and ", max));
  };
  if (auto st = check(limits.cpu_secs >= 0 && limits.cpu_secs <= maxima.wall_timeout_secs,
                      "cpu seconds", 0, maxima.wall_timeout_secs);
      !st.ok()) {
    return st;
  }
  constexpr uint64_t kMiB = 1 << 20;
  if (auto st =
          check(limits.memory_bytes >= 16 * kMiB && limits.memory_bytes <= maxima.memory_bytes,
                "memory bytes", 16 * kMiB, maxima.memory_bytes);
      !st.ok()) {
    return st;
  }
  if (auto st = check(limits.max_pids >= 8 && limits.max_pids <= maxima.max_pids, "pids", 8,
                      maxima.max_pids);
      !st.ok()) {
    return st;
  }
  if (auto st = check(
          limits.max_output_bytes >= 1024 && limits.max_output_bytes <= maxima.max_output_bytes,
          "output bytes", 1024, maxima.max_output_bytes);
      !st.ok()) {
    return st;
  }
  if (auto st =
          check(limits.max_file_bytes >= 1024 && limits.max_file_bytes <= maxima.max_file_bytes,
                "file size bytes", 1024, maxima.max_file_bytes);
      !st.ok()) {
    return st;
  }
  if (auto st = check(limits.tmpfs_bytes >= kMiB && limits.tmpfs_bytes <= maxima.tmpfs_bytes,
                      "tmpfs bytes", kMiB, maxima.tmpfs_bytes);
      !st.ok()) {
    return st;
  }
  return check(limits.max_open_files >= 16 && limits.max_open_files <= maxima.max_open_files,
               "open files", 16, maxima.max_open_files);
}

}  // namespace aevatar::sandbox
