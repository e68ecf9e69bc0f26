// `nyxid ssh exec --service S --principal P [--timeout-secs N] [-- COMMAND]`:
// one call of an SSH service's route, the prompt on stdin. NyxID (and the
// node, and the host's wrapper) run only the Aevatar command profile; any
// other COMMAND is refused. Prints NyxID's SSH result, one JSON document
// {"exit_code", "timed_out", "stdout", "stderr"}, with or without --json, and
// exits with the remote exit code; with --json a failure is a problem object.
#include <iostream>
#include <iterator>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"
#include "nyxid/nodes/ssh_command_profile.h"

namespace aevatar::cli {
namespace {

struct ExecOptions {
  std::string service;
  std::string principal;
  int timeout_secs = 300;
  std::vector<std::string> command;
};

int RunExec(const NyxidGlobalOptions& global, const ExecOptions& options) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  const std::string input{std::istreambuf_iterator<char>(std::cin),
                          std::istreambuf_iterator<char>()};
  const std::string command = options.command.empty()
                                  ? nyxid::AevatarSshCommand(options.timeout_secs)
                                  : absl::StrJoin(options.command, " ");
  const nlohmann::json body = {
      {"principal", options.principal}, {"command", command}, {"stdin", input}};
  auto result =
      NyxidCall(*session, "POST", "/api/v1/ssh/" + http::PercentEncode(options.service) + "/exec",
                body, std::chrono::seconds(options.timeout_secs + 60));
  if (!result.ok()) return ReportNyxidError(result.status(), global.json());
  std::cout << result->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  const int64_t code = base::IntOr(*result, "exit_code", 1);
  return code >= 0 && code <= 255 ? static_cast<int>(code) : 1;
}

}  // namespace

void AddNyxidSshCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* ssh = app.add_subcommand("ssh", "SSH services through your node");
  ssh->require_subcommand(1);
  auto options = std::make_shared<ExecOptions>();
  CLI::App* exec =
      ssh->add_subcommand("exec", "run the Aevatar command profile; stdin is the prompt");
  exec->add_option("--service", options->service, "SSH service slug or id")->required();
  exec->add_option("--principal", options->principal, "Unix user on the target")->required();
  exec->add_option("--timeout-secs", options->timeout_secs, "Codex's timeout on the host")
      ->check(CLI::Range(1, nyxid::kMaxSshTimeoutSecs));
  exec->add_option("command", options->command,
                   "the command (default: the Aevatar profile; anything else is refused)");
  exec->callback([&global, &exit_code, options] { exit_code = RunExec(global, *options); });
}

}  // namespace aevatar::cli
