#include "os/output_pump.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/errno_error.h"

namespace aevatar::os {
namespace {

using Clock = std::chrono::steady_clock;

// After the child exits, stray holders of the pipes (e.g. a helper's own
// children) get this long to close them before we stop reading.
constexpr auto kDrainGrace = std::chrono::milliseconds(250);

// Returns false at EOF or on a hard read error.
bool ReadChunk(int fd, StreamCapture& capture, size_t cap) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      capture.total_bytes += static_cast<uint64_t>(n);
      size_t room = cap > capture.data.size() ? cap - capture.data.size() : 0;
      size_t keep = std::min(room, static_cast<size_t>(n));
      capture.data.append(buf, keep);
      if (keep < static_cast<size_t>(n)) capture.truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

int MillisUntil(Clock::time_point when) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

}  // namespace

absl::StatusOr<PumpResult> PumpOutput(int stdout_fd, int stderr_fd, ChildProcess& child,
                                      const PumpOptions& options) {
  PumpResult result;
  bool out_open = true;
  bool err_open = true;
  bool child_exited = false;
  bool killed = false;
  Clock::time_point drain_until = Clock::time_point::max();

  while (out_open || err_open) {
    const Clock::time_point now = Clock::now();
    if (!killed && now >= options.deadline) {
      result.end = PumpEnd::kDeadline;
      killed = true;
      if (auto st = child.Signal(SIGKILL); !st.ok()) return st;
    }
    if (child_exited && now >= drain_until) break;

    struct pollfd fds[4];
    nfds_t count = 0;
    int out_index = -1, err_index = -1, child_index = -1, cancel_index = -1;
    if (out_open) fds[out_index = count++] = {stdout_fd, POLLIN, 0};
    if (err_open) fds[err_index = count++] = {stderr_fd, POLLIN, 0};
    if (!child_exited) fds[child_index = count++] = {child.pidfd(), POLLIN, 0};
    if (options.cancel_fd >= 0 && !killed)
      fds[cancel_index = count++] = {options.cancel_fd, POLLIN, 0};

    Clock::time_point wake = child_exited ? drain_until : options.deadline;
    int timeout = killed && !child_exited ? 1000 : MillisUntil(wake);
    int ready = ::poll(fds, count, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return base::ErrnoError("poll", errno);
    }
    if (out_index >= 0 && fds[out_index].revents) {
      out_open = ReadChunk(stdout_fd, result.out, options.max_bytes_per_stream);
    }
    if (err_index >= 0 && fds[err_index].revents) {
      err_open = ReadChunk(stderr_fd, result.err, options.max_bytes_per_stream);
    }
    if (child_index >= 0 && fds[child_index].revents) {
      child_exited = true;
      drain_until = Clock::now() + kDrainGrace;
    }
    if (cancel_index >= 0 && fds[cancel_index].revents) {
      result.end = PumpEnd::kCancelled;
      killed = true;
      if (auto st = child.Signal(SIGKILL); !st.ok()) return st;
    }
  }
  return result;
}

}  // namespace aevatar::os
