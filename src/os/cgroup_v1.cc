// cgroup v1: one directory per controller hierarchy (memory, pids, cpu,
// cpuacct, freezer), possibly co-mounted (e.g. "cpu,cpuacct").
#include <signal.h>

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "os/cgroup.h"
#include "os/cgroup_files.h"

namespace aevatar::os {
namespace {

namespace files = cgroup_files;

constexpr const char* kControllers[] = {"memory", "pids", "cpu", "cpuacct", "freezer"};

class CgroupV1 : public RunCgroup {
 public:
  // `dirs` maps controller -> this run's directory (co-mounted controllers share one).
  explicit CgroupV1(std::map<std::string, std::string> dirs) : dirs_(std::move(dirs)) {}
  ~CgroupV1() override {
    if (!kept_) (void)Destroy();
  }

  absl::Status AddProcess(pid_t pid) override {
    std::string text = std::to_string(pid);
    for (const std::string& dir : UniqueDirs()) {
      if (auto st = files::WriteFile(dir + "/cgroup.procs", text); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

  absl::Status SetLimits(const CgroupLimits& limits) override {
    const std::string& memory = dirs_.at("memory");
    const std::string bytes = std::to_string(limits.memory_bytes);
    // The memory limit may not exceed the memory+swap one: when raising, the
    // first write fails with EINVAL, so raise memory+swap first and retry.
    absl::Status st = open_.Write(memory + "/memory.limit_in_bytes", bytes);
    if (!st.ok()) {
      (void)open_.Write(memory + "/memory.memsw.limit_in_bytes", bytes);
      st = open_.Write(memory + "/memory.limit_in_bytes", bytes);
      if (!st.ok()) return st;
    }
    // Absent when swap accounting is off; then there is no swap to limit.
    (void)open_.Write(memory + "/memory.memsw.limit_in_bytes", bytes);
    (void)open_.Write(memory + "/memory.swappiness", "0");
    (void)open_.Write(memory + "/memory.max_usage_in_bytes", "0");  // per-run peak on reuse
    if (auto pids = open_.Write(dirs_.at("pids") + "/pids.max", std::to_string(limits.max_pids));
        !pids.ok()) {
      return pids;
    }
    // v2 weight 100 == v1 shares 1024.
    const uint64_t shares = std::max<uint64_t>(2, uint64_t{limits.cpu_weight} * 1024 / 100);
    return open_.Write(dirs_.at("cpu") + "/cpu.shares", std::to_string(shares));
  }

  bool IsEmpty() const override {
    for (const std::string& dir : UniqueDirs()) {
      auto procs = files::ReadFile(dir + "/cgroup.procs");
      if (!procs.ok() || !procs->empty()) return false;
    }
    return true;
  }

  std::vector<std::string> ProcsFiles() const override {
    std::vector<std::string> files;
    for (const std::string& dir : UniqueDirs()) files.push_back(dir + "/cgroup.procs");
    return files;
  }

  absl::StatusOr<std::vector<int>> JoinFds() override {
    std::vector<int> fds;
    for (const std::string& file : ProcsFiles()) {
      auto fd = open_.WriteFd(file);
      if (!fd.ok()) return fd.status();
      fds.push_back(*fd);
    }
    return fds;
  }

  absl::StatusOr<CgroupUsage> ReadUsage() override {
    CgroupUsage usage;
    auto cpu = open_.ReadNumber(dirs_["cpuacct"] + "/cpuacct.usage");
    if (!cpu.ok()) return cpu.status();
    usage.cpu_ns = *cpu;
    auto peak = open_.ReadNumber(dirs_["memory"] + "/memory.max_usage_in_bytes");
    if (!peak.ok()) return peak.status();
    usage.memory_peak_bytes = *peak;
    auto oom = open_.ReadKeyed(dirs_["memory"] + "/memory.oom_control", "oom_kill");
    if (!oom.ok()) return oom.status();
    usage.oom_kills = *oom;
    auto pids = open_.ReadKeyed(dirs_["pids"] + "/pids.events", "max");
    if (!pids.ok()) return pids.status();
    usage.pids_max_events = *pids;
    return usage;
  }

  absl::Status KillAll() override {
    // Freeze first so nothing forks while we kill, then thaw to let SIGKILL land.
    const std::string& freezer = dirs_["freezer"];
    if (auto st = files::WriteFile(freezer + "/freezer.state", "FROZEN"); !st.ok()) return st;
    for (const std::string& dir : UniqueDirs()) {
      auto procs = files::ReadFile(dir + "/cgroup.procs");
      if (!procs.ok()) continue;
      for (const std::string& line :
           std::vector<std::string>(absl::StrSplit(*procs, '\n', absl::SkipEmpty()))) {
        ::kill(std::stoi(line), SIGKILL);
      }
    }
    return files::WriteFile(freezer + "/freezer.state", "THAWED");
  }

  void Keep() override { kept_ = true; }

  absl::Status Destroy() override {
    if (destroyed_) return absl::OkStatus();
    destroyed_ = true;
    open_.Clear();
    absl::Status result;
    for (const std::string& dir : UniqueDirs()) {
      auto procs = files::ReadFile(dir + "/cgroup.procs");
      if (procs.ok() && !procs->empty()) {
        (void)KillAll();
        break;
      }
    }
    for (const std::string& dir : UniqueDirs()) result.Update(files::RemoveDir(dir));
    return result;
  }

 private:
  std::vector<std::string> UniqueDirs() const {
    std::vector<std::string> dirs;
    for (const auto& [controller, dir] : dirs_) {
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    }
    return dirs;
  }

  std::map<std::string, std::string> dirs_;
  files::OpenFiles open_;
  bool destroyed_ = false;
  bool kept_ = false;
};

class CgroupV1Manager : public CgroupManager {
 public:
  explicit CgroupV1Manager(std::map<std::string, std::string> parents)
      : parents_(std::move(parents)) {}

  std::string_view version() const override { return "v1"; }

  int RemoveStale(std::string_view prefix) override {
    int removed = 0;
    for (const auto& [controller, parent] : parents_) {
      removed += files::RemoveStaleRunDirs(parent, std::string(prefix));
    }
    return removed;
  }

  absl::StatusOr<std::unique_ptr<RunCgroup>> CreateUnlimited(std::string_view name) override {
    std::map<std::string, std::string> dirs;
    for (const auto& [controller, parent] : parents_) {
      dirs[controller] = absl::StrCat(parent, "/", std::string(name));
    }
    // Construct first so a partial creation is cleaned up by the destructor.
    auto cgroup = std::make_unique<CgroupV1>(dirs);
    for (const auto& [controller, dir] : dirs) {
      if (auto st = files::MakeDir(dir); !st.ok()) return st;
    }
    return std::unique_ptr<RunCgroup>(std::move(cgroup));
  }

 private:
  std::map<std::string, std::string> parents_;  // controller -> parent dir
};

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupManager>> MakeCgroupV1Manager(
    std::string_view parent_name, const std::vector<files::CgroupMount>& mounts) {
  std::map<std::string, std::string> parents;
  for (const char* controller : kControllers) {
    for (const auto& mount : mounts) {
      if (mount.fstype != "cgroup") continue;
      std::vector<std::string> options = absl::StrSplit(mount.options, ',');
      if (std::find(options.begin(), options.end(), controller) == options.end()) continue;
      parents[controller] = absl::StrCat(mount.mount_point, "/", std::string(parent_name));
      break;
    }
    if (!parents.count(controller)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cgroup v1 controller not mounted: ", controller));
    }
  }
  for (const auto& [controller, dir] : parents) {
    if (auto st = files::MakeDir(dir); !st.ok()) return st;
  }
  return std::unique_ptr<CgroupManager>(new CgroupV1Manager(std::move(parents)));
}

}  // namespace aevatar::os
