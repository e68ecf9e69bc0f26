// nyxid: the broker. `serve` runs it; the other subcommands are its client.
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/mutex_mode.h"
#include "cli/command_examples.h"
#include "cli/config_file.h"
#include "cli/nyxid_commands.h"
#include "cli/version.h"

namespace {

// Each command's --help example (command_examples.h).
const std::vector<aevatar::cli::CommandExample> kNyxidExamples = {
    {"", "nyxid login --username alice"},
    {"serve", "nyxid serve --listen 127.0.0.1:8080 --state-dir /var/lib/nyxid"},
    {"login", "nyxid login --username alice --password-stdin < password.txt"},
    {"whoami", "nyxid whoami --json"},
    {"logout", "nyxid logout"},
    {"passwd", "nyxid passwd"},
    {"keys", "nyxid keys rotate"},
    {"keys rotate", "nyxid keys rotate"},
    {"audit", "nyxid audit list --after 120 --json"},
    {"audit list", "nyxid audit list --after 120 --json"},
    {"service", "nyxid service list --json"},
    {"service list", "nyxid service list --json"},
    {"service add-ssh",
     "nyxid service add-ssh --label build-box --host 10.0.0.5 --port 22 --via-node node_0123 "
     "--node-key --principals deploy"},
    {"agent-key", "nyxid agent-key list"},
    {"agent-key create", "nyxid agent-key create --label ci --allow chrono-sandbox --json"},
    {"agent-key list", "nyxid agent-key list --json"},
    {"agent-key revoke", "nyxid agent-key revoke ak_0123abcd"},
    {"node", "nyxid node list"},
    {"node register-token", "nyxid node register-token --name build-box"},
    {"node register",
     "nyxid node register --token TOKEN --url wss://nyxid.example:8080/api/v1/nodes/ws"},
    {"node list", "nyxid node list --json"},
    {"node delete", "nyxid node delete node_0123abcd"},
    {"node ssh-credentials", "nyxid node ssh-credentials list"},
    {"node ssh-credentials add",
     "nyxid node ssh-credentials add --service build-box --principal deploy --key-file "
     "~/.ssh/deploy_ed25519 --host 10.0.0.5 --port 22"},
    {"node ssh-credentials rotate-host-key",
     "nyxid node ssh-credentials rotate-host-key --host 10.0.0.5 --port 22"},
    {"node ssh-credentials list", "nyxid node ssh-credentials list"},
    {"node daemon", "nyxid node daemon start"},
    {"node daemon run", "nyxid node daemon run --log-level info"},
    {"node daemon start", "nyxid node daemon start --profile default"},
    {"node daemon status", "nyxid node daemon status"},
    {"node daemon stop", "nyxid node daemon stop"},
    {"node daemon install", "nyxid node daemon install"},
    {"ssh", "nyxid ssh exec --service build-box --principal deploy"},
    {"ssh exec", "nyxid ssh exec --service build-box --principal deploy --timeout-secs 600"},
};

// Every command that runs (a leaf) takes `--json`: one JSON document on
// stdout, errors included (ReportNyxidError). Where the command has
// `--output table|json`, it is the same as --output json. `serve` and `node
// daemon run` already have theirs: JSON log lines (AddLogFormatFlag).
void AddJsonFlags(CLI::App& command, aevatar::cli::NyxidGlobalOptions& global) {
  const std::vector<CLI::App*> subs = command.get_subcommands([](CLI::App*) { return true; });
  const bool leaf = subs.empty() && command.get_parent() != nullptr;
  if (leaf && command.get_option_no_throw("--json") == nullptr) {
    const bool has_output = command.get_option_no_throw("--output") != nullptr;
    command.add_flag_callback(
        "--json", [&global] { global.output = "json"; },
        has_output ? "Same as --output json"
                   : "Print one JSON document on stdout (an error: a problem object with code "
                     "and diagnostic_id)");
  }
  for (CLI::App* sub : subs) AddJsonFlags(*sub, global);
}

}  // namespace

int main(int argc, char** argv) {
  aevatar::base::UseReleaseMutexes();
  CLI::App app{"nyxid: identity, routes, tokens and the exact-route proxy"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nyxid ") + aevatar::cli::kVersion);
  aevatar::cli::NyxidGlobalOptions global;
  app.add_option("--url", global.url, "broker URL (default: $NYXID_URL, or the login's URL)");
  int exit_code = 0;
  const CLI::App* serve = aevatar::cli::AddNyxidServeCommand(app, exit_code);
  aevatar::cli::AddNyxidAccountCommands(app, global, exit_code);
  aevatar::cli::AddNyxidSessionCommands(app, global, exit_code);
  aevatar::cli::AddNyxidAuditCommands(app, global, exit_code);
  aevatar::cli::AddNyxidServiceCommands(app, global, exit_code);
  aevatar::cli::AddNyxidAgentKeyCommands(app, global, exit_code);
  aevatar::cli::AddNyxidNodeCommands(app, global, exit_code);
  aevatar::cli::AddNyxidSshCommands(app, global, exit_code);
  AddJsonFlags(app, global);
  aevatar::cli::SetCommandExamples(app, kNyxidExamples);
  try {
    aevatar::cli::ParseWithServeConfig(app, serve, "nyxid", argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad arguments
  }
  return exit_code;
}
