// cgroup v2: one unified hierarchy; controllers are enabled for children
// through cgroup.subtree_control of each ancestor.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "os/cgroup.h"
#include "os/cgroup_files.h"

namespace aevatar::os {
namespace {

namespace files = cgroup_files;

class CgroupV2 : public RunCgroup {
 public:
  explicit CgroupV2(std::string dir) : dir_(std::move(dir)) {}
  ~CgroupV2() override {
    if (!kept_) (void)Destroy();
  }

  absl::Status AddProcess(pid_t pid) override {
    return files::WriteFile(dir_ + "/cgroup.procs", std::to_string(pid));
  }

  absl::Status SetLimits(const CgroupLimits& limits) override {
    if (auto st = open_.Write(dir_ + "/memory.max", std::to_string(limits.memory_bytes));
        !st.ok()) {
      return st;
    }
    (void)open_.Write(dir_ + "/memory.swap.max", "0");
    if (auto st = open_.Write(dir_ + "/pids.max", std::to_string(limits.max_pids)); !st.ok()) {
      return st;
    }
    (void)open_.Write(dir_ + "/cpu.weight", std::to_string(limits.cpu_weight));
    return absl::OkStatus();
  }

  bool IsEmpty() const override {
    auto procs = files::ReadFile(dir_ + "/cgroup.procs");
    return procs.ok() && procs->empty();
  }

  std::vector<std::string> ProcsFiles() const override { return {dir_ + "/cgroup.procs"}; }

  absl::StatusOr<std::vector<int>> JoinFds() override {
    auto fd = open_.WriteFd(dir_ + "/cgroup.procs");
    if (!fd.ok()) return fd.status();
    return std::vector<int>{*fd};
  }

  absl::StatusOr<CgroupUsage> ReadUsage() override {
    CgroupUsage usage;
    auto cpu_us = open_.ReadKeyed(dir_ + "/cpu.stat", "usage_usec");
    if (!cpu_us.ok()) return cpu_us.status();
    usage.cpu_ns = *cpu_us * 1000;
    // memory.peak exists from Linux 5.19; older kernels leave it 0.
    if (auto peak = open_.ReadNumber(dir_ + "/memory.peak"); peak.ok()) {
      usage.memory_peak_bytes = *peak;
    }
    auto oom = open_.ReadKeyed(dir_ + "/memory.events", "oom_kill");
    if (!oom.ok()) return oom.status();
    usage.oom_kills = *oom;
    auto pids = open_.ReadKeyed(dir_ + "/pids.events", "max");
    if (!pids.ok()) return pids.status();
    usage.pids_max_events = *pids;
    return usage;
  }

  absl::Status KillAll() override { return files::WriteFile(dir_ + "/cgroup.kill", "1"); }

  void Keep() override { kept_ = true; }

  absl::Status Destroy() override {
    if (destroyed_) return absl::OkStatus();
    destroyed_ = true;
    open_.Clear();
    auto procs = files::ReadFile(dir_ + "/cgroup.procs");
    if (procs.ok() && !procs->empty()) (void)KillAll();
    return files::RemoveDir(dir_);
  }

 private:
  std::string dir_;
  files::OpenFiles open_;
  bool destroyed_ = false;
  bool kept_ = false;
};

class CgroupV2Manager : public CgroupManager {
 public:
  explicit CgroupV2Manager(std::string parent) : parent_(std::move(parent)) {}

  std::string_view version() const override { return "v2"; }

  int RemoveStale(std::string_view prefix) override {
    return files::RemoveStaleRunDirs(parent_, std::string(prefix));
  }

  absl::StatusOr<std::unique_ptr<RunCgroup>> CreateUnlimited(std::string_view name) override {
    std::string dir = absl::StrCat(parent_, "/", std::string(name));
    if (auto st = files::MakeDir(dir); !st.ok()) return st;
    return std::unique_ptr<RunCgroup>(std::make_unique<CgroupV2>(dir));
  }

 private:
  std::string parent_;
};

bool HasControllers(const std::string& dir) {
  auto text = files::ReadFile(dir + "/cgroup.controllers");
  if (!text.ok()) return false;
  std::vector<std::string> names = absl::StrSplit(*text, absl::ByAnyChar(" \n"));
  auto has = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  return has("memory") && has("pids");
}

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupManager>> MakeCgroupV2Manager(
    std::string_view parent_name, const std::vector<files::CgroupMount>& mounts) {
  for (const auto& mount : mounts) {
    if (mount.fstype != "cgroup2" || !HasControllers(mount.mount_point)) continue;
    std::string parent = absl::StrCat(mount.mount_point, "/", std::string(parent_name));
    // The root may hold processes and still delegate; enable for our parent
    // and for the runs below it. cpu is optional (absent in some hosts).
    (void)files::WriteFile(mount.mount_point + "/cgroup.subtree_control", "+memory +pids +cpu");
    if (auto st = files::MakeDir(parent); !st.ok()) return st;
    if (auto st = files::WriteFile(parent + "/cgroup.subtree_control", "+memory +pids"); !st.ok()) {
      return st;
    }
    (void)files::WriteFile(parent + "/cgroup.subtree_control", "+cpu");
    return std::unique_ptr<CgroupManager>(new CgroupV2Manager(std::move(parent)));
  }
  return absl::FailedPreconditionError("no cgroup v2 hierarchy with memory and pids controllers");
}

absl::StatusOr<std::unique_ptr<CgroupManager>> DetectCgroupManager(std::string_view parent_name) {
  auto mounts = files::ListCgroupMounts();
  if (!mounts.ok()) return mounts.status();
  auto v2 = MakeCgroupV2Manager(parent_name, *mounts);
  if (v2.ok()) return v2;
  auto v1 = MakeCgroupV1Manager(parent_name, *mounts);
  if (v1.ok()) return v1;
  return absl::FailedPreconditionError(absl::StrCat(
      "no usable cgroup hierarchy: v2: ", v2.status().message(), "; v1: ", v1.status().message()));
}

}  // namespace aevatar::os
