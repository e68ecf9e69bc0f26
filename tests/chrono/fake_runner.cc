#include "fake_runner.h"

#include <poll.h>

#include <csignal>

namespace aevatar::chrono {
namespace {

// How often a held run looks at its cancel fd.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(5);

bool Readable(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace

absl::StatusOr<sandbox::RunResult> FakeRunner::Run(const sandbox::RunSpec& spec,
                                                   const sandbox::RunControl& control) {
  sandbox::RunResult result;
  absl::MutexLock lock(&mu_);
  sources_.push_back(spec.source);
  while (!mu_.AwaitWithTimeout(absl::Condition(&open_), kCancelPoll)) {
    if (Readable(control.cancel_fd)) {
      result.cancelled = true;
      result.verdict = sandbox::Verdict::kSignaled;
      result.exit_code = 128 + SIGKILL;
      result.signal = SIGKILL;
      return result;
    }
  }
  result.stdout_data = spec.source;
  return result;
}

void FakeRunner::Open() {
  absl::MutexLock lock(&mu_);
  open_ = true;
}

void FakeRunner::Close() {
  absl::MutexLock lock(&mu_);
  open_ = false;
}

bool FakeRunner::WaitStarted(int count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(sources_.size()) >= count;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

int FakeRunner::started() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(sources_.size());
}

std::vector<std::string> FakeRunner::sources() const {
  absl::MutexLock lock(&mu_);
  return sources_;
}

}  // namespace aevatar::chrono
