#ifndef AEVATAR_CLI_DOCTOR_COMMAND_H_
#define AEVATAR_CLI_DOCTOR_COMMAND_H_

#include <string>

#include "doctor/check.h"
#include "doctor/host_checks.h"

namespace CLI {
class App;
}

namespace aevatar::cli {

// `chrono-sandbox doctor` and `aevatar doctor`: the host preflight
// (doctor/host_checks.h; aevatar adds doctor/stack_checks.h).
struct DoctorOptions {
  std::string output = "table";  // table | json
  std::string state_dir;         // chrono: "." when empty; aevatar: .state
  std::string codex_path;        // "" = the pinned install
  std::string codex_backend = "gvisor";
  // Managed Codex is configured when this is set (chrono-sandbox: a model,
  // aevatar: an LLM upstream): a missing Codex CLI or runsc is then a blocker.
  std::string codex_configured_by;
};

// Registers `doctor` on chrono-sandbox's `app`; `options` must outlive parsing.
CLI::App* AddChronoDoctorCommand(CLI::App& app, DoctorOptions& options);
// Registers `doctor` on aevatar's `app`.
CLI::App* AddAevatarDoctorCommand(CLI::App& app, DoctorOptions& options);

// Runs the host checks (and, for aevatar, the state checks), prints the
// report on stdout and returns 0 when no check failed, 1 on a blocker and 2
// for a bad --output.
int RunChronoDoctorCommand(const DoctorOptions& options);
int RunAevatarDoctorCommand(const DoctorOptions& options);

// The flags both doctor commands take (--output, --codex-path, --codex-backend).
CLI::App* AddDoctorFlags(CLI::App* doctor, DoctorOptions& options);
// The host checks' options from the flags, checking free disk at `state_dir`.
doctor::HostCheckOptions DoctorHostOptions(const DoctorOptions& options,
                                           const std::string& state_dir);

// Prints `report` as a table or JSON ("table" | "json") and returns the exit code.
int PrintDoctorReport(const doctor::Report& report, const std::string& output);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_DOCTOR_COMMAND_H_
