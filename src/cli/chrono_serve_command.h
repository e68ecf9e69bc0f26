#ifndef AEVATAR_CLI_CHRONO_SERVE_COMMAND_H_
#define AEVATAR_CLI_CHRONO_SERVE_COMMAND_H_

#include "chrono/service.h"

namespace CLI {
class App;
}

namespace aevatar::cli {

// `chrono-sandbox serve`: the executor's HTTP service, until SIGINT/SIGTERM.
CLI::App* AddServeCommand(CLI::App& app, chrono::ServiceConfig& config);

// Returns the process exit code: 0 after a clean stop, 1 when start-up fails.
int RunServeCommand(const chrono::ServiceConfig& config);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_CHRONO_SERVE_COMMAND_H_
