#ifndef AEVATAR_TESTS_TESTING_POLL_H_
#define AEVATAR_TESTS_TESTING_POLL_H_

// Waiting in tests for a state another thread or process reaches. A wait is
// never a delay that an assertion then relies on: it ends when the condition
// holds, and its bound only stops a hung case from hanging the suite.

#include <chrono>
#include <functional>
#include <thread>

namespace aevatar::testing {

// The bound on waiting for something that must happen (a socket closing, a
// handler returning, a process exiting). No assertion depends on its length:
// only a hang exceeds it, so a loaded or instrumented machine never does.
inline constexpr std::chrono::seconds kHangGuard{30};

// Polls `condition` every 10 ms until it holds; false once `timeout` has
// passed without it.
inline bool PollUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds timeout = kHangGuard) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_POLL_H_
