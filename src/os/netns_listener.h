#ifndef AEVATAR_OS_NETNS_LISTENER_H_
#define AEVATAR_OS_NETNS_LISTENER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "os/unique_fd.h"

namespace aevatar::os {

// A fresh network namespace (loopback only, up) and one TCP socket listening
// on 127.0.0.1:port inside it. The socket stays bound to that namespace
// wherever its descriptor goes, so the process holding it can accept
// connections made from inside the namespace while nothing of the process
// runs there. Both descriptors are O_CLOEXEC.
struct NetnsListener {
  UniqueFd netns;   // the namespace; a run joins it with setns(2)
  UniqueFd listen;  // listening, IPv4 loopback, in `netns`
  uint16_t port = 0;
};

// Makes the namespace and the listener on a short-lived thread of its own
// (the calling thread's namespace is untouched). Thread-safe.
absl::StatusOr<NetnsListener> MakeNetnsListener();

}  // namespace aevatar::os

#endif  // AEVATAR_OS_NETNS_LISTENER_H_
