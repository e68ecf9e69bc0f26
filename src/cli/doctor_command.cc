#include "cli/doctor_command.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "doctor/host_checks.h"
#include "doctor/report_format.h"

namespace aevatar::cli {
CLI::App* AddDoctorFlags(CLI::App* doctor, DoctorOptions& options) {
  doctor->add_option("--output", options.output, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  doctor->add_flag_callback(
      "--json", [&options] { options.output = "json"; }, "Same as --output json");
  doctor->add_option("--codex-path", options.codex_path,
                     "The Codex CLI binary (default: the pinned install under /opt/aevatar/codex)");
  doctor->add_option("--codex-backend", options.codex_backend,
                     "Sandbox backend of managed Codex runs: gvisor (default) or native");
  return doctor;
}

doctor::HostCheckOptions DoctorHostOptions(const DoctorOptions& options,
                                           const std::string& state_dir) {
  doctor::HostCheckOptions host;
  host.codex_path = options.codex_path;
  host.codex_backend = options.codex_backend;
  host.codex_configured = !options.codex_configured_by.empty();
  host.state_dir = state_dir;
  return host;
}

CLI::App* AddChronoDoctorCommand(CLI::App& app, DoctorOptions& options) {
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check what the executor needs from this host (exit 1 on a blocker)");
  doctor->add_option("--state-dir", options.state_dir,
                     "The state directory serve will use (free disk is checked there)");
  doctor->add_option("--codex-model", options.codex_configured_by,
                     "The serve flag: with it, managed Codex's needs are blockers");
  return AddDoctorFlags(doctor, options);
}

int PrintDoctorReport(const doctor::Report& report, const std::string& output) {
  if (output == "json") {
    std::cout << doctor::ReportToJson(report).dump() << std::endl;
  } else if (output == "table") {
    std::cout << doctor::FormatTable(report) << std::flush;
  } else {
    std::cerr << "doctor: --output is table or json\n";
    return 2;
  }
  return doctor::ExitCode(report);
}

int RunChronoDoctorCommand(const DoctorOptions& options) {
  const std::string state_dir = options.state_dir.empty() ? "." : options.state_dir;
  const doctor::Report report =
      doctor::RunChecks(doctor::HostChecks(DoctorHostOptions(options, state_dir)));
  return PrintDoctorReport(report, options.output);
}

}  // namespace aevatar::cli
