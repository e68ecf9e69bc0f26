// chrono-sandbox: the executor. Subcommands: run (one program, from the shell).
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/chrono_run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"chrono-sandbox: runs programs in isolated one-shot sandboxes"};
  app.require_subcommand(1);
  aevatar::cli::RunCommandOptions run_options;
  CLI::App* run = aevatar::cli::AddRunCommand(app, run_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad arguments
  }
  if (run->parsed()) return aevatar::cli::RunRunCommand(run_options);
  return 2;
}
