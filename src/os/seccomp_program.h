#ifndef AEVATAR_OS_SECCOMP_PROGRAM_H_
#define AEVATAR_OS_SECCOMP_PROGRAM_H_

#include <linux/filter.h>

#include <utility>
#include <vector>

namespace aevatar::os {

// A compiled seccomp-bpf program, loaded in each sandboxed child with
// prctl(PR_SET_SECCOMP). Immutable and thread-safe. The sandbox's own policy
// is compiled at build time (seccomp_policy.h, precompiled_seccomp_policy.h).
class SeccompProgram {
 public:
  // Wraps an already compiled program.
  static SeccompProgram FromFilters(std::vector<sock_filter> filters) {
    return SeccompProgram(std::move(filters));
  }
  const std::vector<sock_filter>& filters() const { return filters_; }

  // Valid for the lifetime of this object.
  const sock_fprog* program() const { return &program_; }

  SeccompProgram(SeccompProgram&& other) noexcept;
  SeccompProgram& operator=(SeccompProgram&& other) noexcept;
  SeccompProgram(const SeccompProgram&) = delete;
  SeccompProgram& operator=(const SeccompProgram&) = delete;

 private:
  explicit SeccompProgram(std::vector<sock_filter> filters);
  std::vector<sock_filter> filters_;
  sock_fprog program_{};
};

}  // namespace aevatar::os

#endif  // AEVATAR_OS_SECCOMP_PROGRAM_H_
