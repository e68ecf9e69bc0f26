#ifndef AEVATAR_CLI_AEVATAR_APPROVALS_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_APPROVALS_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar approvals list | show ID | approve ID | deny ID [--json]`: the
// logged-in user's durable approvals against a running aevatar.
struct ApprovalsOptions {
  std::string url;
  std::string id;
  bool json = false;
};

struct ApprovalsCommands {
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* approve = nullptr;
  CLI::App* deny = nullptr;
  bool parsed() const;
};

ApprovalsCommands AddApprovalsCommand(CLI::App& app, ApprovalsOptions& options);
// Exit codes: 0 success, 1 a typed error (printed with its diagnostic id), 2
// bad arguments. `show` prints the exact call, prompt included, so a human
// decides on what will run.
int RunApprovalsCommand(const ApprovalsCommands& commands, const ApprovalsOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_APPROVALS_COMMAND_H_
