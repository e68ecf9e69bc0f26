// Freestanding: compiled into chrono-sandbox-init, which has no C++ library.
#include <stdint.h>

#include "os/init_image.h"

namespace aevatar::os {
namespace {

class Relocator {
 public:
  Relocator(char* base, size_t size) : base_(base), size_(size) {}
  bool ok() const { return ok_; }

  // Turns the offset stored in `field` into a pointer to `count` objects of
  // `unit` bytes inside the image (0 stays null).
  template <typename P>
  void Fix(P& field, size_t unit = 1, size_t count = 1) {
    const uintptr_t offset = reinterpret_cast<uintptr_t>(field);
    if (offset == 0) {
      field = nullptr;
      return;
    }
    if (offset >= size_ || count > (size_ - offset) / (unit == 0 ? 1 : unit)) {
      ok_ = false;
      field = nullptr;
      return;
    }
    field = reinterpret_cast<P>(base_ + offset);
  }
  // A string must end inside the image.
  void FixString(const char*& field) {
    Fix(field);
    if (field == nullptr) return;
    for (const char* p = field; p < base_ + size_; ++p) {
      if (*p == '\0') return;
    }
    ok_ = false;
  }
  void FixStringArray(char* const*& field) {
    Fix(field, sizeof(char*));
    if (field == nullptr) return;
    char** items = const_cast<char**>(field);
    for (size_t i = 0; ok_; ++i) {
      if (reinterpret_cast<char*>(items + i + 1) > base_ + size_) {
        ok_ = false;
        return;
      }
      if (items[i] == nullptr) return;
      const char* item = items[i];
      FixString(item);
      items[i] = const_cast<char*>(item);
    }
  }

 private:
  char* base_;
  size_t size_;
  bool ok_ = true;
};

}  // namespace

ChildPlan* ReadInitImage(void* image, size_t size) {
  if (size < sizeof(ChildPlan)) return nullptr;
  char* base = static_cast<char*>(image);
  Relocator r(base, size);
  ChildPlan* plan = reinterpret_cast<ChildPlan*>(base);
  r.FixString(plan->root_mount_point);
  r.FixString(plan->root_mount_options);
  r.FixString(plan->old_root_name);
  r.FixString(plan->hostname);
  r.FixString(plan->workdir);
  r.Fix(plan->fs_steps, sizeof(FsStep), plan->fs_step_count);
  r.Fix(plan->rlimits, sizeof(ChildRlimit), plan->rlimit_count);
  r.Fix(plan->stages, sizeof(ChildStage), plan->stage_count);
  r.Fix(plan->seccomp, sizeof(sock_fprog));
  if (!r.ok()) return nullptr;
  for (size_t i = 0; i < plan->fs_step_count; ++i) {
    FsStep& step = const_cast<FsStep&>(plan->fs_steps[i]);
    r.FixString(step.path);
    r.FixString(step.source);
    r.FixString(step.fstype);
    if (step.data_len > 0) {
      r.Fix(step.data, 1, step.data_len);
    } else {
      r.FixString(step.data);  // mount options
    }
  }
  for (size_t i = 0; i < plan->stage_count; ++i) {
    ChildStage& stage = const_cast<ChildStage&>(plan->stages[i]);
    r.FixString(stage.path);
    r.FixStringArray(stage.argv);
    r.FixStringArray(stage.envp);
  }
  if (plan->seccomp != nullptr) {
    sock_fprog& seccomp = const_cast<sock_fprog&>(*plan->seccomp);
    r.Fix(seccomp.filter, sizeof(sock_filter), seccomp.len);
  }
  return r.ok() ? plan : nullptr;
}

}  // namespace aevatar::os
