#include "sandbox/gvisor_oci_config.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "sandbox/rootfs_plan.h"
#include "sandbox/runtime.h"

namespace aevatar::sandbox {
namespace {

using nlohmann::json;

// The native backend's rlimits (native_backend.cc BuildRlimits), in OCI form;
// keep the two in step. gVisor enforces them inside its own kernel.
json Rlimits(const Limits& limits) {
  const uint64_t cpu = CpuLimitSecs(limits);
  auto rlimit = [](const char* type, uint64_t soft, uint64_t hard) {
    return json{{"type", type}, {"soft", soft}, {"hard", hard}};
  };
  return json::array({
      rlimit("RLIMIT_CPU", cpu, cpu + 1),
      rlimit("RLIMIT_FSIZE", limits.max_file_bytes, limits.max_file_bytes),
      rlimit("RLIMIT_NOFILE", limits.max_open_files, limits.max_open_files),
      rlimit("RLIMIT_CORE", 0, 0),
      rlimit("RLIMIT_STACK", 8u << 20, 8u << 20),
      rlimit("RLIMIT_MEMLOCK", 64u << 10, 64u << 10),
      rlimit("RLIMIT_MSGQUEUE", 0, 0),
  });
}

json Mount(const std::string& destination, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return json{
      {"destination", destination}, {"type", type}, {"source", source}, {"options", options}};
}

json Mounts(const OciConfigInput& input) {
  const std::string tmpfs_size = absl::StrCat("size=", input.limits.tmpfs_bytes);
  json mounts = json::array();
  // Inside gVisor, proc and a tmpfs /dev are the sentry's own implementations
  // (its /dev holds only null, zero, full, random, urandom, tty, pts, shm).
  mounts.push_back(Mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}));
  mounts.push_back(Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "noexec", "mode=755", "size=64k"}));
  mounts.push_back(
      Mount("/dev/shm", "tmpfs", "shm", {"nosuid", "nodev", "noexec", "mode=1777", tmpfs_size}));
  mounts.push_back(Mount("/usr", "bind", "/usr", {"rbind", "ro", "nosuid", "nodev"}));
  for (const std::string& dir : input.host_dirs_to_bind) {
    mounts.push_back(Mount(dir, "bind", dir, {"rbind", "ro", "nosuid", "nodev"}));
  }
  for (const ServerFile& file : input.server_files) {
    if (file.contents != nullptr) continue;  // written into the rootfs itself
    mounts.push_back(
        Mount(file.sandbox_path, "bind", file.host_path, {"bind", "ro", "nosuid", "nodev"}));
  }
  // tmpfs pages live in the sentry's memory, so they count against the run's
  // memory cgroup, as the native backend's tmpfs does.
  mounts.push_back(Mount("/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777", tmpfs_size}));
  // A host directory rather than a tmpfs so that stages (esbuild, then node)
  // see each other's files; RLIMIT_FSIZE bounds each file written there.
  mounts.push_back(
      Mount(kWorkspaceDir, "bind", input.workspace_dir, {"rbind", "rw", "nosuid", "nodev"}));
  for (const std::string& name : input.memory_dirs) {
    mounts.push_back(Mount(absl::StrCat(kWorkspaceDir, "/", name), "tmpfs", "tmpfs",
                           {"nosuid", "nodev", "mode=0755", absl::StrCat("uid=", kSandboxUid),
                            absl::StrCat("gid=", kSandboxGid), tmpfs_size}));
  }
  return mounts;
}

}  // namespace

uint64_t CpuLimitSecs(const Limits& limits) {
  return static_cast<uint64_t>(EffectiveCpuLimitSecs(limits));
}

absl::StatusOr<std::string> BuildOciConfig(const OciConfigInput& input) {
  const json no_capabilities = json::array();
  json process = {
      {"terminal", false},
      {"user", {{"uid", kSandboxUid}, {"gid", kSandboxGid}}},
      {"args", input.argv},
      {"env", input.envp},
      {"cwd", kWorkspaceDir},
      {"capabilities",
       {{"bounding", no_capabilities},
        {"effective", no_capabilities},
        {"inheritable", no_capabilities},
        {"permitted", no_capabilities},
        {"ambient", no_capabilities}}},
      {"noNewPrivileges", true},
      {"rlimits", Rlimits(input.limits)},
  };
  json network = {{"type", "network"}};
  if (!input.netns_path.empty()) network["path"] = input.netns_path;
  json linux = {
      {"namespaces", json::array({{{"type", "pid"}},
                                  network,
                                  {{"type", "ipc"}},
                                  {{"type", "uts"}},
                                  {{"type", "mount"}}})},
      {"resources",
       {{"memory", {{"limit", input.memory_limit_bytes}, {"swap", input.memory_limit_bytes}}},
        {"pids", {{"limit", input.pids_limit}}}}},
  };
  if (!input.cgroups_path.empty()) linux["cgroupsPath"] = input.cgroups_path;
  json config = {
      {"ociVersion", "1.0.2"},
      {"process", std::move(process)},
      {"root", {{"path", input.rootfs_dir}, {"readonly", true}}},
      {"hostname", "sandbox"},
      {"mounts", Mounts(input)},
      {"linux", std::move(linux)},
  };
  try {
    return config.dump();
  } catch (const json::exception&) {
    // JSON strings are Unicode: runsc would silently mangle other bytes.
    return absl::InvalidArgumentError("the gvisor backend needs env values that are valid UTF-8");
  }
}

}  // namespace aevatar::sandbox
