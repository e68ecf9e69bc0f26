#ifndef AEVATAR_TESTS_TESTING_GVISOR_CODEX_H_
#define AEVATAR_TESTS_TESTING_GVISOR_CODEX_H_

#include <cstdlib>
#include <string_view>

namespace aevatar::testing {

// Under Debian's gVisor (20221219, ptrace platform) about one Codex run in
// ten whose model has Codex execute a command never finishes: Codex waits
// for EOF on its spawn helper's control socket, and this gVisor does not
// report the peer's hang-up when the close precedes the epoll wait that
// collects the helper's acknowledgement (docs/chrono-sandbox.md, "The gVisor
// hang"). CI skips those cases on gVisor, saying so; the same cases run on
// the native backend, gVisor's network isolation is tested with plain
// programs (GivenNetnsTest), and AEVATAR_GVISOR_CODEX_COMMANDS=1 runs them.
inline bool GvisorCodexCommandsEnabled() {
  const char* value = std::getenv("AEVATAR_GVISOR_CODEX_COMMANDS");
  return value != nullptr && std::string_view(value) == "1";
}

inline constexpr char kGvisorCodexCommandSkip[] =
    "a command-running Codex run under gVisor 20221219 can hang (its epoll misses a hang-up); "
    "set AEVATAR_GVISOR_CODEX_COMMANDS=1 to run it";

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_GVISOR_CODEX_H_
