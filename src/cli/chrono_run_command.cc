#include "cli/chrono_run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "cli/chrono_run_remote.h"
#include "cli/read_file.h"
#include "os/unique_fd.h"
#include "sandbox/engine.h"
#include "sandbox/result_json.h"

namespace aevatar::cli {
namespace {

int BadArgument(const std::string& message) {
  std::cerr << "chrono-sandbox run: " << message << "\n";
  return kRunBadArguments;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions& options) {
  CLI::App* run = app.add_subcommand("run", "Run one program in a one-shot sandbox");
  run->add_option("--language", options.language, "python|javascript|typescript|bash")->required();
  auto* code = run->add_option("-c,--code", options.code, "The program's source");
  auto* file = run->add_option("--file", options.file, "Read the source from this file");
  code->excludes(file);
  run->add_option("--stdin-file", options.stdin_file, "Feed this file to the program's stdin");
  run->add_option("--timeout-secs", options.timeout_secs, "Wall timeout, 1..600 (default 180)");
  auto* memory =
      run->add_option("--memory-mb", options.memory_mb, "Memory limit in MiB (default 512)");
  auto* cpu =
      run->add_option("--cpu-secs", options.cpu_secs, "CPU seconds per process (default: timeout)");
  run->add_option("--env", options.env, "NAME=VALUE passed to the program (repeatable)");
  auto* backend = run->add_option("--backend", options.backend, "native (default) or gvisor");
  run->add_option("--runtime", options.runtime,
                  "Run in this runtime environment, NAME=LANGUAGE:ROOT (ROOT mounted read-only); "
                  "with --server, the name of one the server declares");
  run->add_flag("--json", options.json, "Print one JSON object with the result and exit 0");
  run->add_option("--server", options.server,
                  "Run on this chrono-sandbox serve (http://HOST:PORT) with its limits and warm "
                  "sandboxes; the delegation token comes from $CHRONO_SANDBOX_TOKEN")
      ->excludes(memory)
      ->excludes(cpu)
      ->excludes(backend);
  run->add_option("--ca-file", options.ca_file,
                  "With an https:// --server: a PEM file of CAs to trust besides the system's")
      ->needs("--server");
  return run;
}

int RunRunCommand(const RunCommandOptions& options) {
  sandbox::RunSpec spec;
  auto language = sandbox::ParseLanguage(options.language);
  if (!language) return BadArgument("unknown --language '" + options.language + "'");
  spec.language = *language;
  auto backend = sandbox::ParseBackend(options.backend);
  if (!backend) return BadArgument("unknown --backend '" + options.backend + "'");
  spec.backend = *backend;

  if (!options.file.empty()) {
    if (!ReadWholeFile(options.file, spec.source))
      return BadArgument("cannot read " + options.file);
  } else if (!options.code.empty()) {
    spec.source = options.code;
  } else {
    return BadArgument("give the program with -c CODE or --file PATH");
  }
  if (!options.stdin_file.empty() && !ReadWholeFile(options.stdin_file, spec.stdin_data)) {
    return BadArgument("cannot read " + options.stdin_file);
  }
  for (const std::string& pair : options.env) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos) return BadArgument("--env wants NAME=VALUE");
    spec.env.push_back({pair.substr(0, eq), pair.substr(eq + 1)});
  }
  if (options.memory_mb <= 0) return BadArgument("--memory-mb must be positive");
  if (!options.server.empty()) return RunOnServer(options, spec);
  spec.limits.wall_timeout_secs = options.timeout_secs;
  spec.limits.memory_bytes = static_cast<uint64_t>(options.memory_mb) << 20;
  spec.limits.cpu_secs = options.cpu_secs;

  sandbox::EngineOptions engine_options;
  engine_options.one_shot = true;
  if (!options.runtime.empty()) {
    auto env = sandbox::ParseRuntimeFlag(options.runtime);
    if (!env.ok()) return BadArgument(std::string(env.status().message()));
    spec.runtime = env->name;
    engine_options.runtimes.push_back(*env);
  }
  auto engine = sandbox::Engine::Create(engine_options);
  if (!engine.ok()) {
    std::cerr << "chrono-sandbox run: sandbox unavailable: " << engine.status().message() << "\n";
    return kRunSandboxFailure;
  }
  auto result = (*engine)->Run(spec);
  if (!result.ok()) {
    if (absl::IsInvalidArgument(result.status()))
      return BadArgument(std::string(result.status().message()));
    std::cerr << "chrono-sandbox run: sandbox failure: " << result.status().message() << "\n";
    return kRunSandboxFailure;
  }
  if (options.json) {
    std::cout << sandbox::RunResultToJson(*result).dump() << std::endl;
    return 0;
  }
  // A closed terminal is the reader's choice; the exit code still reports the run.
  (void)os::WriteAll(1, result->stdout_data, "stdout");
  (void)os::WriteAll(2, result->stderr_data, "stderr");
  if (result->verdict == sandbox::Verdict::kWallTimeout) return kRunWallTimeout;
  return result->exit_code;
}

}  // namespace aevatar::cli
