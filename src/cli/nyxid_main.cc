// nyxid: the broker. `serve` runs it; the other subcommands are its client.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/config_file.h"
#include "cli/nyxid_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"nyxid: identity, routes, tokens and the exact-route proxy"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nyxid 0.1.0");
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
