#ifndef AEVATAR_CLI_WAIT_FOR_SIGNAL_H_
#define AEVATAR_CLI_WAIT_FOR_SIGNAL_H_

namespace aevatar::cli {

// Blocks SIGINT and SIGTERM in the calling thread (call it before starting
// any thread, so every thread inherits the mask).
void BlockStopSignals();

// Waits for SIGINT or SIGTERM; returns the signal number.
int WaitForStopSignal();

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_WAIT_FOR_SIGNAL_H_
