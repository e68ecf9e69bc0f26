#include <cstring>
#include <vector>

#include "os/init_image.h"

namespace aevatar::os {
namespace {

// Appends objects to one buffer and hands out their offsets.
class ImageWriter {
 public:
  explicit ImageWriter(std::string& bytes) : bytes_(bytes) {}

  size_t Append(const void* data, size_t size, size_t align) {
    bytes_.resize((bytes_.size() + align - 1) / align * align);
    const size_t offset = bytes_.size();
    bytes_.append(static_cast<const char*>(data), size);
    return offset;
  }
  template <typename T>
  size_t Array(const T* items, size_t count) {
    return count == 0 ? 0 : Append(items, sizeof(T) * count, alignof(T));
  }
  size_t Bytes(const char* data, size_t size) {
    if (data == nullptr) return 0;
    const size_t offset = Append(data, size, 1);
    bytes_.push_back('\0');
    return offset;
  }
  size_t String(const char* text) { return text == nullptr ? 0 : Bytes(text, std::strlen(text)); }
  // A NULL-terminated array of strings (argv, envp).
  size_t StringArray(char* const* items) {
    if (items == nullptr) return 0;
    std::vector<uintptr_t> offsets;
    for (char* const* item = items; *item != nullptr; ++item) offsets.push_back(String(*item));
    offsets.push_back(0);
    return Array(offsets.data(), offsets.size());
  }
  template <typename T>
  T* At(size_t offset) {
    return reinterpret_cast<T*>(bytes_.data() + offset);
  }

 private:
  std::string& bytes_;
};

template <typename P>
P AsPointer(size_t offset) {
  return reinterpret_cast<P>(static_cast<uintptr_t>(offset));
}

}  // namespace

std::string WriteInitImage(const ChildPlan& plan) {
  std::string bytes;
  ImageWriter out(bytes);
  ChildPlan image = plan;
  out.Append(&image, sizeof(image), alignof(ChildPlan));  // filled in last

  std::vector<FsStep> steps(plan.fs_steps, plan.fs_steps + plan.fs_step_count);
  for (FsStep& step : steps) {
    step.path = AsPointer<const char*>(out.String(step.path));
    step.source = AsPointer<const char*>(out.String(step.source));
    step.fstype = AsPointer<const char*>(out.String(step.fstype));
    // Mount options are a C string (data_len 0); file contents are counted.
    step.data = AsPointer<const char*>(step.data_len > 0 ? out.Bytes(step.data, step.data_len)
                                                         : out.String(step.data));
  }
  std::vector<ChildStage> stages(plan.stages, plan.stages + plan.stage_count);
  for (ChildStage& stage : stages) {
    stage.path = AsPointer<const char*>(out.String(stage.path));
    stage.argv = AsPointer<char* const*>(out.StringArray(stage.argv));
    stage.envp = AsPointer<char* const*>(out.StringArray(stage.envp));
  }
  sock_fprog seccomp = *plan.seccomp;
  seccomp.filter = AsPointer<sock_filter*>(out.Array(plan.seccomp->filter, plan.seccomp->len));

  image.root_mount_point = AsPointer<const char*>(out.String(plan.root_mount_point));
  image.root_mount_options = AsPointer<const char*>(out.String(plan.root_mount_options));
  image.old_root_name = AsPointer<const char*>(out.String(plan.old_root_name));
  image.hostname = AsPointer<const char*>(out.String(plan.hostname));
  image.workdir = AsPointer<const char*>(out.String(plan.workdir));
  image.fs_steps = AsPointer<const FsStep*>(out.Array(steps.data(), steps.size()));
  image.rlimits = AsPointer<const ChildRlimit*>(out.Array(plan.rlimits, plan.rlimit_count));
  image.stages = AsPointer<const ChildStage*>(out.Array(stages.data(), stages.size()));
  image.seccomp = AsPointer<const sock_fprog*>(out.Array(&seccomp, 1));
  image.stdin_fd = kInitStdinFd;
  image.stdout_fd = kInitStdoutFd;
  image.stderr_fd = kInitStderrFd;
  image.error_fd = kInitErrorFd;
  image.status_fd = kInitStatusFd;
  image.handoff_fd = kInitHandoffFd;
  *out.At<ChildPlan>(0) = image;
  return bytes;
}

}  // namespace aevatar::os
