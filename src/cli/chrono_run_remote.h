#ifndef AEVATAR_CLI_CHRONO_RUN_REMOTE_H_
#define AEVATAR_CLI_CHRONO_RUN_REMOTE_H_

#include <string>

#include "cli/chrono_run_command.h"
#include "sandbox/run_spec.h"

namespace aevatar::cli {

// The environment variable `chrono-sandbox run --server` reads the NyxID
// delegation token from (never a flag: command lines are visible to every
// user of the host).
inline constexpr char kServerTokenVariable[] = "CHRONO_SANDBOX_TOKEN";

// `chrono-sandbox run --server URL`: sends the run to a `chrono-sandbox
// serve` (POST /execute) instead of making a sandbox here, so the server's
// limits, runtimes and warm sandboxes apply. Prints the program's stdout and
// stderr and returns its exit code (124 on wall timeout); with --json
// prints the server's result object and returns 0. A refusal prints the
// server's problem (code, detail, diagnostic id) and returns 2 for a 4xx,
// 125 otherwise.
// `spec` holds the source, stdin and environment read from the flags.
int RunOnServer(const RunCommandOptions& options, const sandbox::RunSpec& spec);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_CHRONO_RUN_REMOTE_H_
