#ifndef AEVATAR_CLI_AEVATAR_CODEX_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_CODEX_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar codex credential ensure|status` and
// `aevatar codex exec --prompt P [--timeout-secs N] [--json]
//   [--private-ssh SERVICE --principal USER]`: codex_exec against a running
// aevatar with the logged-in session, on the managed sandbox or (with
// --private-ssh) on the user's own host once its owner approved the call.
struct CodexOptions {
  std::string url;
  std::string prompt;
  int timeout_secs = 0;  // 0: the target's default (managed 180, private_ssh 300)
  bool json = false;
  // private_ssh: the service (slug or id) and principal; the call waits for
  // a person's approval (at most approval_wait_secs) before it runs.
  std::string ssh_service;
  std::string ssh_principal;
  int approval_wait_secs = 900;
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
