#include "os/shared_cgroup.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/errno_error.h"
#include "os/unique_fd.h"

namespace aevatar::os {
namespace {

// A claimed slot: the run's cgroup plus the lock that makes it ours.
class SharedCgroup final : public RunCgroup {
 public:
  // `cgroup` must already be kept (RunCgroup::Keep).
  SharedCgroup(std::unique_ptr<RunCgroup> cgroup, UniqueFd lock)
      : cgroup_(std::move(cgroup)), lock_(std::move(lock)) {}
  // Kills what the run left before the lock (member order) is released.
  ~SharedCgroup() override { (void)Destroy(); }

  absl::Status AddProcess(pid_t pid) override { return cgroup_->AddProcess(pid); }
  absl::Status SetLimits(const CgroupLimits& limits) override { return cgroup_->SetLimits(limits); }
  bool IsEmpty() const override { return cgroup_->IsEmpty(); }
  std::vector<std::string> ProcsFiles() const override { return cgroup_->ProcsFiles(); }
  absl::StatusOr<std::vector<int>> JoinFds() override { return cgroup_->JoinFds(); }
  absl::StatusOr<CgroupUsage> ReadUsage() override { return cgroup_->ReadUsage(); }
  absl::Status KillAll() override { return cgroup_->KillAll(); }
  // A shared slot is emptied, never removed (see the header).
  absl::Status Destroy() override { return IsEmpty() ? absl::OkStatus() : KillAll(); }
  void Keep() override {}

 private:
  std::unique_ptr<RunCgroup> cgroup_;
  UniqueFd lock_;
};

std::string DirectoryOf(const std::string& file) { return file.substr(0, file.rfind('/')); }

// Locks `dir` without waiting. Empty when another process holds it, or when
// the directory we locked is no longer the one at `dir` (a concurrent
// remover won); the caller then moves on to the next slot.
absl::StatusOr<UniqueFd> TryLock(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoError("open " + dir, errno);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return UniqueFd();
    return base::ErrnoError("flock " + dir, errno);
  }
  struct stat locked {
  }, current{};
  if (::fstat(fd.get(), &locked) != 0 || ::stat(dir.c_str(), &current) != 0 ||
      locked.st_ino != current.st_ino || locked.st_dev != current.st_dev) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RunCgroup>> ClaimSharedCgroup(CgroupManager& manager,
                                                             std::string_view prefix,
                                                             size_t slots) {
  for (size_t n = 0; n < slots; ++n) {
    auto cgroup = manager.CreateUnlimited(absl::StrCat(std::string(prefix), n));
    if (!cgroup.ok()) return cgroup.status();
    (*cgroup)->Keep();  // exists for everyone, whether or not we win it
    auto lock = TryLock(DirectoryOf((*cgroup)->ProcsFiles().front()));
    if (!lock.ok()) return lock.status();
    if (!lock->valid()) continue;
    auto shared = std::make_unique<SharedCgroup>(std::move(*cgroup), std::move(*lock));
    // A holder that crashed mid-run may have left processes behind.
    if (!shared->IsEmpty() && (!shared->KillAll().ok() || !shared->IsEmpty())) continue;
    return std::unique_ptr<RunCgroup>(std::move(shared));
  }
  return absl::ResourceExhaustedError("every shared cgroup slot is in use");
}

}  // namespace aevatar::os
