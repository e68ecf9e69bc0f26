// aevatar codex credential ensure|status, aevatar codex exec.
#include "cli/aevatar_codex_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "aevatar/approvals/approval.h"
#include "base/json_read.h"
#include "cli/aevatar_session.h"
#include "cli/server_replies.h"

namespace aevatar::cli {
namespace {

// Past the server's managed request deadline (300 s plus the extension of a
// longer run), so the CLI sees aevatar's typed timeout instead of its own.
std::chrono::milliseconds ExecTimeout(int timeout_secs) {
  return std::chrono::seconds(std::max(300, timeout_secs) + 180);
}

int PrintStatus(const http::ClientResponse& response, bool as_json) {
  if (response.status != 200) return PrintProblem(response);
  const nlohmann::json status = ParsedOrNull(response.body);
  const bool ready = base::BoolOr(status, "execution_ready", false);
  if (as_json) {
    std::cout << status.dump(2) << "\n";
    return ready ? 0 : 1;
  }
  const std::string action = base::StringOr(status, "action", "");
  if (!action.empty()) std::cout << "credential " << action << "\n";
  std::cout << "status: " << base::StringOr(status, "status", "") << "\n"
            << "execution_ready: " << (ready ? "true" : "false") << "\n"
            << "execution_readiness_reason: "
            << base::StringOr(status, "execution_readiness_reason", "") << "\n";
  if (!ready) std::cout << "remediation: " << base::StringOr(status, "remediation", "") << "\n";
  return ready ? 0 : 1;
}

// private_ssh: ask, wait for a person's decision, then run the approved call.
int RunPrivateSsh(const AevatarSession& session, const CodexOptions& options) {
  nlohmann::json body = {
      {"target",
       {{"kind", "private_ssh"},
        {"private_ssh", {{"service", options.ssh_service}, {"principal", options.ssh_principal}}}}},
      {"prompt", options.prompt}};
  if (options.timeout_secs > 0) body["timeout_secs"] = options.timeout_secs;
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const http::ClientResponse asked = CallAevatar(session, "POST", "/api/tools/codex_exec", text,
                                                 ExecTimeout(options.timeout_secs));
  if (asked.status != 202) return PrintProblem(asked);
  const std::string id = base::StringOr(ParsedOrNull(asked.body), "approval_id", "");
  // It becomes a path segment and a header: an id's characters only.
  if (!orchestrator::IsApprovalId(id)) {
    std::cerr << "aevatar: the server answered an invalid approval id\n";
    return 1;
  }
  std::cerr << "approval required: " << id << "\n"
            << "  approve it with `aevatar approvals approve " << id << "` or at " << session.url
            << "/ui; waiting up to " << options.approval_wait_secs << " s\n";
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::seconds(std::max(1, options.approval_wait_secs));
  std::string state = "pending";
  while (state == "pending" && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const http::ClientResponse read = CallAevatar(session, "GET", "/api/approvals/" + id);
    if (read.status != 200) return PrintProblem(read);
    state = base::StringOr(ParsedOrNull(read.body), "state", "");
  }
  if (state != "approved") {
    std::cerr << "aevatar: the approval is " << state << "; nothing ran\n";
    return 1;
  }
  http::Headers headers;
  headers.Set("Approval-Id", id);
  const http::ClientResponse ran = CallAevatar(session, "POST", "/api/tools/codex_exec", text,
                                               ExecTimeout(options.timeout_secs), headers);
  if (ran.status != 200) return PrintProblem(ran);
  // NyxID's raw SSH response, as the host's wrapper ended.
  const nlohmann::json result = ParsedOrNull(ran.body);
  std::cout << result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return base::IntOr(result, "exit_code", -1) == 0 && !base::BoolOr(result, "timed_out", true) ? 0
                                                                                               : 1;
}

}  // namespace

CodexCommands AddCodexCommand(CLI::App& app, CodexOptions& options) {
  CLI::App* codex = app.add_subcommand("codex", "Managed codex_exec (target managed_sandbox)");
  codex->require_subcommand(1);
  CLI::App* credential =
      codex->add_subcommand("credential", "The managed invocation credential lifecycle");
  credential->require_subcommand(1);
  CodexCommands commands;
  commands.ensure = credential->add_subcommand(
      "ensure", "Provision or reconcile the credential (POST /api/managed-codex/credential)");
  commands.status = credential->add_subcommand(
      "status", "Read status and execution readiness (GET /api/managed-codex/credential)");
  for (CLI::App* sub : {commands.ensure, commands.status}) {
    sub->add_option("--url", options.url, "aevatar URL (default: the session's)");
    sub->add_flag("--json", options.json, "Print the status document as JSON");
  }
  commands.exec = codex->add_subcommand("exec", "Hand a natural-language task to managed Codex");
  commands.exec->add_option("--prompt", options.prompt, "The task")->required();
  commands.exec->add_option("--timeout-secs", options.timeout_secs,
                            "1..600 (default 180; private_ssh 300)");
  CLI::Option* ssh = commands.exec->add_option("--private-ssh", options.ssh_service,
                                               "Run on your host: the SSH service (slug or id)");
  commands.exec->add_option("--principal", options.ssh_principal, "The SSH user on that host")
      ->needs(ssh);
  ssh->needs(commands.exec->get_option("--principal"));
  commands.exec->add_option("--approval-wait-secs", options.approval_wait_secs,
                            "How long to wait for the approval (default 900)");
  commands.exec->add_flag("--json", options.json, "Print the whole result as JSON");
  commands.exec->add_option("--url", options.url, "aevatar URL (default: the session's)");
  return commands;
}

int RunCodexCommand(const CodexCommands& commands, const CodexOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) {
    std::cerr << "aevatar: " << session.status().message() << "\n";
    return 1;
  }
  if (commands.ensure->parsed()) {
    return PrintStatus(CallAevatar(*session, "POST", "/api/managed-codex/credential"),
                       options.json);
  }
  if (commands.status->parsed()) {
    return PrintStatus(CallAevatar(*session, "GET", "/api/managed-codex/credential"), options.json);
  }
  if (!options.ssh_service.empty()) return RunPrivateSsh(*session, options);
  nlohmann::json body = {{"target", {{"kind", "managed_sandbox"}}},
                         {"workspace", {{"kind", "empty_git"}}},
                         {"prompt", options.prompt}};
  if (options.timeout_secs > 0) body["timeout_secs"] = options.timeout_secs;
  const http::ClientResponse response =
      CallAevatar(*session, "POST", "/api/tools/codex_exec",
                  body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  ExecTimeout(options.timeout_secs));
  if (response.status != 200) {
    if (options.json) std::cout << response.body << "\n";
    // managed_execution_nonzero_exit keeps the runner's terminal fields.
    const nlohmann::json problem = ParsedOrNull(response.body);
    const nlohmann::json& runner = base::ObjectOrEmpty(problem, "result");
    if (!options.json && !runner.empty()) {
      std::cout << base::StringOr(runner, "output", "") << "\n";
      std::cerr << "runner: status " << base::StringOr(runner, "status", "") << ", exit code "
                << base::IntOr(runner, "exit_code", -1) << ", diagnostic id "
                << base::StringOr(runner, "diagnostic_id", "") << "\n";
    }
    return PrintProblem(response);
  }
  const nlohmann::json result = ParsedOrNull(response.body);
  if (options.json) {
    std::cout << result.dump(2) << "\n";
  } else {
    std::cout << base::StringOr(result, "output", "") << "\n";
    std::cerr << "status " << base::StringOr(result, "status", "") << ", exit code "
              << base::IntOr(result, "exit_code", -1) << ", diagnostic id "
              << base::StringOr(result, "diagnostic_id", "") << "\n";
  }
  return base::StringOr(result, "status", "") == "succeeded" ? 0 : 1;
}

}  // namespace aevatar::cli
