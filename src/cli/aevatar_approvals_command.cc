// aevatar approvals list | show | approve | deny.
#include "cli/aevatar_approvals_command.h"

#include <iostream>

#include "CLI/CLI.hpp"
#include "aevatar/approvals/approval.h"
#include "base/json_read.h"
#include "cli/aevatar_session.h"
#include "cli/server_replies.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;

// ID  STATE  TOOL  TARGET
void PrintLine(const json& approval) {
  const json& call = base::ObjectOrEmpty(approval, "call");
  const json& target = base::ObjectOrEmpty(call, "target");
  const std::string kind = base::StringOr(target, "kind", "");
  const json& details = base::ObjectOrEmpty(target, kind);
  std::cout << base::StringOr(approval, "id", "") << "  " << base::StringOr(approval, "state", "")
            << "  " << base::StringOr(approval, "tool", "") << "  " << kind;
  if (!details.empty()) {
    std::cout << " " << base::StringOr(details, "principal", "") << "@"
              << base::StringOr(details, "service", "");
  }
  std::cout << "\n";
}

int PrintApproval(const http::ClientResponse& response, bool as_json) {
  if (response.status != 200) return PrintProblem(response);
  const json approval = ParsedOrNull(response.body);
  if (as_json) {
    std::cout << approval.dump(2) << "\n";
    return 0;
  }
  PrintLine(approval);
  std::cout << "call_digest: " << base::StringOr(approval, "call_digest", "") << "\n"
            << "call:\n"
            << base::ObjectOrEmpty(approval, "call").dump(2) << "\n";
  return 0;
}

}  // namespace

bool ApprovalsCommands::parsed() const {
  return list->parsed() || show->parsed() || approve->parsed() || deny->parsed();
}

ApprovalsCommands AddApprovalsCommand(CLI::App& app, ApprovalsOptions& options) {
  CLI::App* approvals = app.add_subcommand("approvals", "Your pending and decided approvals");
  approvals->require_subcommand(1);
  ApprovalsCommands commands;
  commands.list = approvals->add_subcommand("list", "List your approvals, newest first");
  commands.show = approvals->add_subcommand("show", "Show one approval and its exact call");
  commands.approve = approvals->add_subcommand("approve", "Approve this exact call, once");
  commands.deny = approvals->add_subcommand("deny", "Deny it");
  for (CLI::App* sub : {commands.list, commands.show, commands.approve, commands.deny}) {
    sub->add_option("--url", options.url, "aevatar URL (default: the session's)");
    sub->add_flag("--json", options.json, "Print the documents as JSON");
  }
  for (CLI::App* sub : {commands.show, commands.approve, commands.deny}) {
    sub->add_option("id", options.id, "The approval id")->required();
  }
  return commands;
}

int RunApprovalsCommand(const ApprovalsCommands& commands, const ApprovalsOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) {
    std::cerr << "aevatar: " << session.status().message() << "\n";
    return 1;
  }
  // The id becomes a path segment: nothing but an id's characters.
  if (!options.id.empty() && !orchestrator::IsApprovalId(options.id)) {
    std::cerr << "aevatar: an approval id is 1 to 64 characters of [A-Za-z0-9_-]\n";
    return 2;
  }
  const std::string path = "/api/approvals/" + options.id;
  if (commands.show->parsed()) {
    return PrintApproval(CallAevatar(*session, "GET", path), options.json);
  }
  if (commands.approve->parsed()) {
    return PrintApproval(CallAevatar(*session, "POST", path + "/approve"), options.json);
  }
  if (commands.deny->parsed()) {
    return PrintApproval(CallAevatar(*session, "POST", path + "/deny"), options.json);
  }
  const http::ClientResponse response = CallAevatar(*session, "GET", "/api/approvals");
  if (response.status != 200) return PrintProblem(response);
  const json listed = ParsedOrNull(response.body);
  if (options.json) {
    std::cout << listed.dump(2) << "\n";
    return 0;
  }
  const json& approvals = base::ArrayOrEmpty(listed, "approvals");
  if (approvals.empty()) std::cout << "no approvals\n";
  for (const json& approval : approvals) PrintLine(approval);
  return 0;
}

}  // namespace aevatar::cli
