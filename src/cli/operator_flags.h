#ifndef AEVATAR_CLI_OPERATOR_FLAGS_H_
#define AEVATAR_CLI_OPERATOR_FLAGS_H_

#include <string>

#include "CLI/CLI.hpp"

namespace aevatar::cli {

// Adds the operator flags every `serve` has (docs/operations.md), and so
// their config keys `log-format` and `metrics-token-file`:
//   --log-format json|text   the log lines' shape (default json); applied as
//                            soon as the flag is parsed, so start-up lines
//                            use it too;
//   --metrics-token-file F   a file holding the bearer token that reads
//                            /metrics (trailing whitespace dropped) into
//                            `*metrics_token`; without it /metrics answers
//                            loopback peers only.
// `metrics_token` must outlive the parse.
void AddOperatorFlags(CLI::App* serve, std::string* metrics_token);

// Adds only `--log-format json|text` (for `aevatar up`, whose three services
// share one process and one log, and `nyxid node daemon run`). Both adders
// also add `--json`, the same as --log-format json: a foreground server
// prints no result document, so its machine-readable output is its log.
void AddLogFormatFlag(CLI::App* command);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_OPERATOR_FLAGS_H_
