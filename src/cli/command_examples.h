#ifndef AEVATAR_CLI_COMMAND_EXAMPLES_H_
#define AEVATAR_CLI_COMMAND_EXAMPLES_H_

// Every command's --help ends with an example of its use. Each binary keeps
// its examples in one table, so a new command without one stands out in
// review, and tests/cli/cli_help_test.cc fails for it.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace aevatar::cli {

// One row: the command's path below the binary ("" for the binary itself,
// "workflow run" for a nested one) and the example command line.
using CommandExample = std::pair<std::string_view, std::string_view>;

// Sets "Example:\n  <example>" as the footer of each command the table
// names. A path `app` does not have is skipped (chrono-sandbox registers
// only the command it runs); the help test catches a row that names nothing.
void SetCommandExamples(CLI::App& app, const std::vector<CommandExample>& examples);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_COMMAND_EXAMPLES_H_
