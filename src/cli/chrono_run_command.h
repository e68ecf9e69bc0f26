#ifndef AEVATAR_CLI_CHRONO_RUN_COMMAND_H_
#define AEVATAR_CLI_CHRONO_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `chrono-sandbox run`: one program in a one-shot sandbox, from the shell.
struct RunCommandOptions {
  std::string language;
  std::string code;
  std::string file;
  std::string stdin_file;
  int timeout_secs = 180;
  int memory_mb = 512;
  int cpu_secs = 0;
  std::vector<std::string> env;
  std::string backend = "native";
  // NAME=LANGUAGE:ROOT: a runtime environment declared for this run and
  // chosen by it; "": the language's default.
  std::string runtime;
  bool json = false;
  // http://host:port of a `chrono-sandbox serve` to run on instead of here
  // (chrono_run_remote.h); "": a one-shot sandbox in this process.
  std::string server;
  std::string ca_file;  // with --server over https: extra trusted CAs (PEM)
};

// Exit codes of `chrono-sandbox run` besides the program's own.
inline constexpr int kRunBadArguments = 2;
inline constexpr int kRunWallTimeout = 124;
inline constexpr int kRunSandboxFailure = 125;

// Registers the subcommand on `app`; `options` must outlive parsing.
CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions& options);

// Runs it. Returns the process exit code: the program's own (128+signal when
// signalled, 124 on wall timeout), 0 with --json, 2 for bad arguments, 125
// when the sandbox itself failed.
int RunRunCommand(const RunCommandOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_CHRONO_RUN_COMMAND_H_
