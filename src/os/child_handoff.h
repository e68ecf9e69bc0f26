#ifndef AEVATAR_OS_CHILD_HANDOFF_H_
#define AEVATAR_OS_CHILD_HANDOFF_H_

#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "os/unique_fd.h"

namespace aevatar::os {

// The parent's half of the hand-off to a sandbox init (the init's half is in
// child_exec.cc). The init is cloned before the run's cgroup and network
// namespace are ready and builds its filesystem meanwhile; the parent then
// sends what the init still needs to start the program: the run cgroup's
// cgroup.procs files, opened for writing, and a prepared network namespace.
// Overlapping the two saves the shorter of them on every run's critical path.
struct HandoffChannel {
  UniqueFd parent_end;
  UniqueFd child_end;  // goes into ChildPlan::handoff_fd
};

// A connected SOCK_SEQPACKET pair (one message = one hand-off), O_CLOEXEC.
absl::StatusOr<HandoffChannel> MakeHandoffChannel();

// Sends the hand-off: `cgroup_procs_fds` (at most kMaxHandoffFds - 1) and
// `netns_fd` (or -1 when the clone made the namespace). Closing the parent
// end without sending tells the init to give up.
absl::Status SendHandoff(int parent_end, std::span<const int> cgroup_procs_fds, int netns_fd);

}  // namespace aevatar::os

#endif  // AEVATAR_OS_CHILD_HANDOFF_H_
