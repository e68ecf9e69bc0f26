#include "doctor/host_checks.h"

#include <sched.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "doctor/host_checks_internal.h"
#include "os/cgroup.h"
#include "os/cgroup_files.h"
#include "os/host_probe.h"
#include "os/init_spawn.h"
#include "os/precompiled_seccomp_policy.h"
#include "os/process.h"

namespace aevatar::doctor {
namespace {

struct NamespaceKind {
  const char* name;
  int flag;
  bool required;  // false: the native backend does not use it
};
constexpr NamespaceKind kNamespaces[] = {
    {"pid", CLONE_NEWPID, true},    {"mount", CLONE_NEWNS, true}, {"net", CLONE_NEWNET, true},
    {"ipc", CLONE_NEWIPC, true},    {"uts", CLONE_NEWUTS, true},  {"cgroup", CLONE_NEWCGROUP, true},
    {"user", CLONE_NEWUSER, false},
};

constexpr char kRunAsRoot[] =
    "run the service as root (the native backend creates namespaces, mounts and cgroups)";

Finding CheckRoot() {
  if (os::RunningAsRoot()) return Pass("running as root");
  return Fail("not running as root", kRunAsRoot);
}

Finding CheckNamespace(const NamespaceKind& kind) {
  absl::Status probed = os::ProbeUnshare(kind.flag);
  if (probed.ok()) return Pass(absl::StrCat("can create a new ", kind.name, " namespace"));
  const std::string detail = absl::StrCat(kind.name, " namespace: ", probed.message());
  if (!kind.required) {
    return Warn(detail + " (the native backend does not use it)",
                "enable user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0) if gVisor or rootless tools need them");
  }
  if (!os::RunningAsRoot()) return Fail(detail, kRunAsRoot);
  return Fail(detail,
              "run on a kernel with namespaces enabled and outside a container that forbids "
              "unshare (a privileged container, or a seccomp/AppArmor profile that allows it)");
}

// The controllers each mount offers, as "v1: memory, pids, …" or
// "v2: memory pids …" (read from the mount's options or cgroup.controllers).
std::string DescribeControllers(std::string_view version) {
  auto mounts = os::cgroup_files::ListCgroupMounts();
  if (!mounts.ok()) return "";
  std::vector<std::string> names;
  for (const auto& mount : *mounts) {
    if (version == "v2" && mount.fstype == "cgroup2") {
      auto controllers = os::cgroup_files::ReadFile(mount.mount_point + "/cgroup.controllers");
      if (controllers.ok() && !controllers->empty()) {
        names.push_back(std::string(absl::StripTrailingAsciiWhitespace(*controllers)));
      }
    } else if (version == "v1" && mount.fstype == "cgroup") {
      names.push_back(std::filesystem::path(mount.mount_point).filename().string());
    }
  }
  return absl::StrJoin(names, ", ");
}

// The controllers os::DetectCgroupManager requires (cgroup.h).
constexpr char kV2Uses[] = "memory, pids and cpu when enabled";
constexpr char kV1Uses[] = "memory, pids, cpu, cpuacct, freezer";

Finding CheckCgroups() {
  constexpr char kFix[] =
      "mount cgroup v2 with the memory and pids controllers enabled for the service's cgroup "
      "(systemd: Delegate=yes), or cgroup v1 hierarchies for memory, pids, cpu, cpuacct and "
      "freezer, writable by root";
  auto manager = os::DetectCgroupManager("chrono-sandbox");
  if (!manager.ok()) return Fail(std::string(manager.status().message()), kFix);
  const std::string version((*manager)->version());
  // The engine's own path: a run cgroup with limits, made and removed. Named
  // like the engine's, so a service start sweeps it if this process dies.
  auto cgroup =
      (*manager)->Create(absl::StrCat("run-", os::CurrentPid(), "-doctor"), os::CgroupLimits{});
  if (!cgroup.ok()) {
    return Fail(absl::StrCat("cgroup ", version, ": cannot create a run cgroup with limits: ",
                             cgroup.status().message()),
                kFix);
  }
  if (absl::Status removed = (*cgroup)->Destroy(); !removed.ok()) {
    return Warn(absl::StrCat("cgroup ", version,
                             ": made a run cgroup but could not remove it: ", removed.message()),
                "the next chrono-sandbox serve start removes it; or rmdir it under chrono-sandbox");
  }
  return Pass(absl::StrCat("cgroup ", version, " (mounted: ", DescribeControllers(version),
                           "; the engine uses ", version == "v2" ? kV2Uses : kV1Uses,
                           "): made and removed a run cgroup with its limits"));
}

Finding CheckNoNewPrivs() {
  absl::Status probed = os::ProbeNoNewPrivs();
  if (probed.ok()) return Pass("NO_NEW_PRIVS can be set");
  return Fail(std::string(probed.message()), "run on Linux 3.5 or later");
}

Finding CheckSeccomp() {
  const os::SeccompProgram policy = os::PrecompiledSandboxPolicy();
  absl::Status probed = os::ProbeSeccompFilter(policy.program());
  if (probed.ok()) {
    return Pass(absl::StrCat("the sandbox's seccomp filter (", policy.filters().size(),
                             " instructions) installs"));
  }
  return Fail(std::string(probed.message()),
              "run on a kernel built with CONFIG_SECCOMP_FILTER, outside a container whose "
              "own seccomp profile forbids installing filters");
}

Finding CheckInit(const std::string& configured) {
  auto path = configured.empty() ? os::DefaultInitExecutablePath()
                                 : absl::StatusOr<std::string>(configured);
  if (!path.ok()) return Fail(std::string(path.status().message()), "");
  auto opened = os::OpenInitExecutable(*path);
  if (!opened.ok()) {
    return Fail(std::string(opened.status().message()),
                absl::StrCat("install chrono-sandbox-init beside chrono-sandbox as a regular file "
                             "owned by root, mode 0755, in a directory only root may write "
                             "(chown root:root ",
                             *path, " && chmod 0755 ", *path, ")"));
  }
  return Pass(*path + ": a regular file only root may write, in a directory only root may write");
}

Finding CheckDisk(const HostCheckOptions& options) {
  // The state directory may not exist before the first start.
  std::error_code error;
  std::filesystem::path dir = std::filesystem::weakly_canonical(options.state_dir, error);
  if (error) dir = std::filesystem::absolute(options.state_dir);
  while (!std::filesystem::exists(dir, error) && dir.has_parent_path() &&
         dir != dir.parent_path()) {
    dir = dir.parent_path();
  }
  auto free_bytes = os::FreeDiskBytes(dir.string());
  if (!free_bytes.ok()) return Fail(std::string(free_bytes.status().message()), "");
  const std::string detail = absl::StrCat(*free_bytes >> 20, " MiB free at ", dir.string(),
                                          " (needs ", options.min_free_bytes >> 20, " MiB)");
  if (*free_bytes >= options.min_free_bytes) return Pass(detail);
  return Fail(detail, "free disk space there or choose another --state-dir");
}

}  // namespace

namespace internal {

void AppendKernelChecks(const HostCheckOptions& options, std::vector<Check>& checks) {
  checks.push_back({"root", CheckRoot});
  for (const NamespaceKind& kind : kNamespaces) {
    checks.push_back(
        {absl::StrCat("namespace.", kind.name), [kind] { return CheckNamespace(kind); }});
  }
  checks.push_back({"cgroup", CheckCgroups});
  checks.push_back({"no_new_privs", CheckNoNewPrivs});
  checks.push_back({"seccomp", CheckSeccomp});
  checks.push_back({"sandbox_init", [path = options.init_path] { return CheckInit(path); }});
  checks.push_back({"disk", [options] { return CheckDisk(options); }});
}

}  // namespace internal

std::vector<Check> HostChecks(const HostCheckOptions& options) {
  std::vector<Check> checks;
  internal::AppendKernelChecks(options, checks);
  internal::AppendRuntimeChecks(options, checks);
  return checks;
}

}  // namespace aevatar::doctor
