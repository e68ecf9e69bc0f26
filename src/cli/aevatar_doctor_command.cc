// `aevatar doctor`: chrono-sandbox's host checks (aevatar up embeds the
// executor) and the checks of up's state directory.
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/doctor_command.h"
#include "doctor/host_checks.h"
#include "doctor/stack_checks.h"

namespace aevatar::cli {

CLI::App* AddAevatarDoctorCommand(CLI::App& app, DoctorOptions& options) {
  options.state_dir = ".state";
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check what `aevatar up` needs from this host (exit 1 on a blocker)");
  doctor->add_option("--state-dir", options.state_dir, "aevatar up's state directory (.state)");
  doctor->add_option("--llm-upstream", options.codex_configured_by,
                     "The up flag: with it, managed Codex's needs are blockers");
  return AddDoctorFlags(doctor, options);
}

int RunAevatarDoctorCommand(const DoctorOptions& options) {
  std::vector<doctor::Check> checks =
      doctor::HostChecks(DoctorHostOptions(options, options.state_dir));
  for (doctor::Check& check : doctor::StackChecks(options.state_dir)) {
    checks.push_back(std::move(check));
  }
  return PrintDoctorReport(doctor::RunChecks(checks), options.output);
}

}  // namespace aevatar::cli
