#include "os/cgroup_pool.h"

#include "base/log.h"
#include "os/shared_cgroup.h"

namespace aevatar::os {

CgroupPool::CgroupPool(CgroupManager* manager, std::string name_prefix, size_t max_idle,
                       size_t shared_slots)
    : manager_(manager),
      prefix_(std::move(name_prefix)),
      max_idle_(max_idle),
      shared_slots_(shared_slots) {}

CgroupPool::~CgroupPool() {
  absl::MutexLock lock(&mu_);
  idle_.clear();  // each RunCgroup removes itself
}

absl::StatusOr<std::unique_ptr<RunCgroup>> CgroupPool::Take(const CgroupLimits& limits) {
  std::unique_ptr<RunCgroup> cgroup;
  std::string name;
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      cgroup = std::move(idle_.back());
      idle_.pop_back();
    } else {
      name = prefix_ + std::to_string(next_++);
    }
  }
  if (!cgroup && shared_slots_ > 0) {
    auto claimed = ClaimSharedCgroup(*manager_, "shared-", shared_slots_);
    if (claimed.ok()) {
      cgroup = std::move(*claimed);
    } else if (!absl::IsResourceExhausted(claimed.status())) {
      return claimed.status();
    }  // every slot busy: a cgroup of our own
  }
  if (!cgroup) {
    auto made = manager_->CreateUnlimited(name);
    if (!made.ok()) return made.status();
    cgroup = std::move(*made);
  }
  if (absl::Status st = cgroup->SetLimits(limits); !st.ok()) return st;  // removed on return
  return cgroup;
}

void CgroupPool::GiveBack(std::unique_ptr<RunCgroup> cgroup) {
  if (!cgroup) return;
  if (cgroup->IsEmpty()) {
    absl::MutexLock lock(&mu_);
    if (idle_.size() < max_idle_) {
      idle_.push_back(std::move(cgroup));
      return;
    }
  }
  if (absl::Status st = cgroup->Destroy(); !st.ok()) {
    base::Log(base::LogLevel::kWarn, "cgroup.destroy_failed", "",
              {{"error", std::string(st.message())}});
  }
}

CgroupUsage CgroupUsageDelta(const CgroupUsage& before, const CgroupUsage& after) {
  auto minus = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
  return {minus(after.cpu_ns, before.cpu_ns), after.memory_peak_bytes,
          minus(after.oom_kills, before.oom_kills),
          minus(after.pids_max_events, before.pids_max_events)};
}

}  // namespace aevatar::os
