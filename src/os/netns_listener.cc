#include "os/netns_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "base/errno_error.h"
#include "os/netns_pool.h"

namespace aevatar::os {
namespace {

constexpr int kBacklog = 64;

// Runs on the helper thread, which is then inside the new namespace.
absl::StatusOr<NetnsListener> MakeHere() {
  auto ns = UnshareEmptyNetns();
  if (!ns.ok()) return ns.status();
  NetnsListener made;
  made.netns = std::move(*ns);
  made.listen.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!made.listen.valid()) return base::ErrnoError("socket", errno);
  sockaddr_in addr;
  std::memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(made.listen.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return base::ErrnoError("bind 127.0.0.1:0", errno);
  }
  if (::listen(made.listen.get(), kBacklog) != 0) return base::ErrnoError("listen", errno);
  socklen_t len = sizeof(addr);
  if (::getsockname(made.listen.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return base::ErrnoError("getsockname", errno);
  }
  made.port = ntohs(addr.sin_port);
  return made;
}

}  // namespace

absl::StatusOr<NetnsListener> MakeNetnsListener() {
  absl::StatusOr<NetnsListener> made = absl::InternalError("not made");
  // unshare(CLONE_NEWNET) moves the calling thread for good: a thread of its
  // own keeps every other thread where it is, and dies with the change.
  std::thread worker([&made] { made = MakeHere(); });
  worker.join();
  return made;
}

}  // namespace aevatar::os
