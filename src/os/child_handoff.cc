#include "os/child_handoff.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/errno_error.h"
#include "os/child_plan.h"

namespace aevatar::os {

absl::StatusOr<HandoffChannel> MakeHandoffChannel() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return base::ErrnoError("socketpair", errno);
  }
  return HandoffChannel{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

absl::Status SendHandoff(int parent_end, std::span<const int> cgroup_procs_fds, int netns_fd) {
  if (cgroup_procs_fds.size() + 1 > kMaxHandoffFds) {
    return absl::InternalError("too many descriptors for the sandbox hand-off");
  }
  ChildHandoff header{static_cast<uint32_t>(cgroup_procs_fds.size()), netns_fd >= 0 ? 1u : 0u};
  int fds[kMaxHandoffFds];
  size_t count = 0;
  for (int fd : cgroup_procs_fds) fds[count++] = fd;
  if (netns_fd >= 0) fds[count++] = netns_fd;

  iovec iov{&header, sizeof(header)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxHandoffFds)] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&message);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int) * count);
  std::memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * count);
  ssize_t sent;
  do {
    sent = ::sendmsg(parent_end, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(sizeof(header))) {
    return base::ErrnoError("send the sandbox hand-off", errno);
  }
  return absl::OkStatus();
}

}  // namespace aevatar::os
