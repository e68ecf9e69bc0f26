#ifndef AEVATAR_TESTS_TESTING_LOOPBACK_LISTENER_H_
#define AEVATAR_TESTS_TESTING_LOOPBACK_LISTENER_H_

#include <cstdint>

namespace aevatar::testing {

// A listening TCP socket on 127.0.0.1 at a port the kernel picks (close-on-
// exec, `backlog` pending connections). Returns the fd and sets `port`, or
// -1 when any step fails (nothing is left open then).
int ListenOnLoopback(int backlog, uint16_t& port);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_LOOPBACK_LISTENER_H_
