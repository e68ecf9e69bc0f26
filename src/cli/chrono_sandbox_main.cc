// chrono-sandbox: the executor.
//   run    one program in a one-shot sandbox, from the shell
//   serve  the HTTP API (/execute, /executions, …)
//   doctor check what the executor needs from this host
#include <string_view>

#include "CLI/CLI.hpp"
#include "base/mutex_mode.h"
#include "cli/chrono_run_command.h"
#include "cli/chrono_serve_command.h"
#include "cli/command_examples.h"
#include "cli/config_file.h"
#include "cli/doctor_command.h"
#include "cli/version.h"

int main(int argc, char** argv) {
  aevatar::base::UseReleaseMutexes();
  CLI::App app{"chrono-sandbox: runs programs in isolated one-shot sandboxes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("chrono-sandbox ") + aevatar::cli::kVersion);
  // A named subcommand registers only its own options: setting up the
  // server's ~30 as well was ~2% of a one-shot `run`. `--help` and mistakes
  // see both.
  const std::string_view first = argc > 1 ? argv[1] : "";
  const bool only_run = first == "run";
  const bool only_serve = first == "serve";
  aevatar::cli::RunCommandOptions run_options;
  CLI::App* run = only_serve ? nullptr : aevatar::cli::AddRunCommand(app, run_options);
  aevatar::chrono::ServiceConfig serve_config;
  CLI::App* serve = only_run ? nullptr : aevatar::cli::AddServeCommand(app, serve_config);
  aevatar::cli::DoctorOptions doctor_options;
  CLI::App* doctor =
      only_run || only_serve ? nullptr : aevatar::cli::AddChronoDoctorCommand(app, doctor_options);
  aevatar::cli::SetCommandExamples(
      app, {{"", "chrono-sandbox run --language python -c 'print(42)'"},
            {"run", "chrono-sandbox run --language bash -c 'echo hello' --timeout-secs 5 --json"},
            {"serve", "chrono-sandbox serve --listen 127.0.0.1:8081 --state-dir /var/lib/chrono"},
            {"doctor", "chrono-sandbox doctor --json"}});
  try {
    aevatar::cli::ParseWithServeConfig(app, serve, "chrono-sandbox", argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad arguments
  }
  if (run != nullptr && run->parsed()) return aevatar::cli::RunRunCommand(run_options);
  if (serve != nullptr && serve->parsed()) return aevatar::cli::RunServeCommand(serve_config);
  if (doctor != nullptr && doctor->parsed()) {
    return aevatar::cli::RunChronoDoctorCommand(doctor_options);
  }
  return 2;
}
