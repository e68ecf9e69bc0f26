#include "os/seccomp_program.h"

namespace aevatar::os {

SeccompProgram::SeccompProgram(std::vector<sock_filter> filters) : filters_(std::move(filters)) {
  program_.len = static_cast<unsigned short>(filters_.size());
  program_.filter = filters_.data();
}

SeccompProgram::SeccompProgram(SeccompProgram&& other) noexcept
    : SeccompProgram(std::move(other.filters_)) {}

SeccompProgram& SeccompProgram::operator=(SeccompProgram&& other) noexcept {
  filters_ = std::move(other.filters_);
  program_.len = static_cast<unsigned short>(filters_.size());
  program_.filter = filters_.data();
  return *this;
}

}  // namespace aevatar::os
