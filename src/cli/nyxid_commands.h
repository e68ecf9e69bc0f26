#ifndef AEVATAR_CLI_NYXID_COMMANDS_H_
#define AEVATAR_CLI_NYXID_COMMANDS_H_

#include <string>

#include "cli/nyxid_cli_session.h"

namespace CLI {
class App;
}

// The `nyxid` subcommands. Each Add* registers its subcommands on `app`;
// when one runs, its callback stores the process exit code in `exit_code`.
namespace aevatar::cli {

// nyxid serve --listen HOST:PORT --state-dir DIR [--bootstrap FILE.yaml]
//             [--public-url URL] [--proxy-timeout-secs N | --proxy-timeout-ms N]
//             [--upstream-ca-file CA.pem] [--config FILE.toml]
// Returns the subcommand.
CLI::App* AddNyxidServeCommand(CLI::App& app, int& exit_code);

// nyxid login [--username U] [--password-stdin]; nyxid whoami
void AddNyxidAccountCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

// nyxid logout; nyxid passwd; nyxid keys rotate
void AddNyxidSessionCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

// nyxid audit list [--after SEQ] [--output json]
void AddNyxidAuditCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

// nyxid service list [--output json]
void AddNyxidServiceCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

// nyxid agent-key create --label L [--allow SERVICE]…; list; revoke ID
void AddNyxidAgentKeyCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

// nyxid service add-ssh --label L --host H --port N --via-node ID --node-key
//   --principals U[,U…]  (registered by AddNyxidServiceCommands)

// nyxid node register-token|register|list|delete, node ssh-credentials
// add|rotate-host-key|list, node daemon run|start|status|stop|install
void AddNyxidNodeCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);
void AddNyxidNodeDaemonCommands(CLI::App& nodes, NyxidGlobalOptions& global, int& exit_code);
// The node profile: `flag`, else $NYXID_PROFILE, else "default".
std::string NodeProfileName(const std::string& flag);

// nyxid ssh exec --service S --principal P [--timeout-secs N] [-- COMMAND]
void AddNyxidSshCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_NYXID_COMMANDS_H_
