#include "os/netns_pool.h"

#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errno_error.h"

namespace aevatar::os {
absl::StatusOr<UniqueFd> UnshareEmptyNetns() {
  if (::unshare(CLONE_NEWNET) != 0) return base::ErrnoError("unshare CLONE_NEWNET", errno);
  UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return base::ErrnoError("socket", errno);
  struct ifreq ifr;
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, "lo", 3);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  if (::ioctl(sock.get(), SIOCSIFFLAGS, &ifr) != 0) return base::ErrnoError("bring up lo", errno);
  // The socket's namespace as an fd (O_CLOEXEC), without a /proc lookup.
  UniqueFd ns(::ioctl(sock.get(), SIOCGSKNS));
  if (!ns.valid()) return base::ErrnoError("SIOCGSKNS", errno);
  return ns;
}

NetnsPool::NetnsPool(size_t target_size, size_t lifetime_total)
    : target_size_(target_size == 0 ? 1 : target_size),
      lifetime_total_(lifetime_total),
      refill_([this] { RefillLoop(); }) {}

NetnsPool::~NetnsPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  refill_.join();
}

absl::StatusOr<UniqueFd> NetnsPool::Take() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &NetnsPool::TakeReady));
  if (ready_.empty()) {
    if (!last_error_.ok()) return last_error_;
    return absl::UnavailableError(Exhausted() ? "the namespace pool made all it may"
                                              : "the namespace pool is stopping");
  }
  UniqueFd fd = std::move(ready_.front());
  ready_.pop_front();  // the refill thread's RefillDue now holds
  return fd;
}

void NetnsPool::RefillLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &NetnsPool::RefillDue));
      if (stopping_ || Exhausted()) return;
    }
    auto made = UnshareEmptyNetns();
    absl::MutexLock lock(&mu_);
    if (made.ok()) {
      ready_.push_back(std::move(*made));
      ++made_;
      last_error_ = absl::OkStatus();
    } else {
      last_error_ = made.status();
      stopping_ = true;  // fail closed: runs now get the error instead of waiting
    }
  }
}

}  // namespace aevatar::os
