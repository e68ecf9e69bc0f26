#ifndef AEVATAR_CLI_AEVATAR_CODEX_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_CODEX_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar codex credential ensure|status` and
// `aevatar codex exec --prompt P [--timeout-secs N] [--json]`: managed
// codex_exec against a running aevatar with the logged-in session.
struct CodexOptions {
  std::string url;
  std::string prompt;
  int timeout_secs = 180;
  bool json = false;
};

struct CodexCommands {
  CLI::App* ensure = nullptr;
  CLI::App* status = nullptr;
  CLI::App* exec = nullptr;
};

CodexCommands AddCodexCommand(CLI::App& app, CodexOptions& options);
// Exit codes: 0 success (ensure/status: execution ready), 1 otherwise (a
// typed error is printed with its diagnostic id), 2 bad arguments. `exec`
// prints the answer (or, with --json, the whole result) on stdout.
int RunCodexCommand(const CodexCommands& commands, const CodexOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_CODEX_COMMAND_H_
