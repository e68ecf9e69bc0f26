// What a sandbox run could leave behind on the host, counted before and after
// a hostile program runs.
//
// The machine is shared: other engineers build and run tests while this suite
// runs, so the host-wide process and namespace counts move on their own. The
// snapshot therefore asserts on what belongs to this test binary and counts
// the rest for the failure message only:
//   - own processes: descendants of this process, plus any process still in
//     one of this binary's run cgroups (chrono-sandbox/run-<our pid>-N), which
//     is where a daemon that escaped its parent would sit;
//   - the namespaces (net, mnt, pid) those processes hold;
//   - this binary's run cgroups under every cgroup v1 controller (and v2);
//   - the mounts of the host mount namespace (/proc/self/mountinfo), which no
//     run may add to.
#ifndef AEVATAR_TESTS_SECURITY_HOST_SNAPSHOT_H_
#define AEVATAR_TESTS_SECURITY_HOST_SNAPSHOT_H_

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace aevatar::security_test {

struct HostSnapshot {
  // "pid comm cgroup" of each process this binary started, directly or not.
  std::vector<std::string> own_processes;
  // Distinct namespace ids ("net:[4026...]") held by own processes.
  std::set<std::string> own_namespaces;
  // This binary's run cgroups that still hold a process (any hierarchy).
  std::vector<std::string> own_run_cgroups;
  // Empty run cgroups kept by the engine for reuse (bounded by its pool).
  int idle_run_cgroups = 0;
  // Lines of /proc/self/mountinfo (the host mount namespace).
  int mounts = 0;
  // Host-wide figures, for messages only (other users change them).
  int all_processes = 0;
  int all_namespaces = 0;
};

// Returns the host's state now. Requires root (it reads other processes'
// /proc entries).
HostSnapshot TakeHostSnapshot();

// Returns "" when `after` holds no more of this binary's processes, namespaces,
// run cgroups or host mounts than `before`, and otherwise says what is left.
std::string DescribeLeftovers(const HostSnapshot& before, const HostSnapshot& after);

// Polls until nothing is left compared with `before` (the kernel may still be
// reaping a killed run) or `timeout` passes. Returns the last description, ""
// when the host is back to `before`.
std::string WaitUntilNothingLeft(const HostSnapshot& before,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Returns the full command lines (NULs as spaces) of host processes whose
// command line contains `needle`.
std::vector<std::string> HostProcessesMatching(const std::string& needle);

}  // namespace aevatar::security_test

#endif  // AEVATAR_TESTS_SECURITY_HOST_SNAPSHOT_H_
