// `nyxid service list`: the caller's route inventory (GET /api/v1/keys).
#include <iomanip>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"

namespace aevatar::cli {
namespace {

std::string YesNo(const nlohmann::json& key, std::string_view field) {
  return base::BoolOr(key, field, false) ? "yes" : "no";
}

std::string Text(const nlohmann::json& key, std::string_view field) {
  return base::StringOr(key, field, "-");
}

int RunServiceList(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto keys = NyxidCall(*session, "GET", "/api/v1/keys");
  if (!keys.ok()) return ReportNyxidError(keys.status(), global.json());
  if (global.output == "json") {
    std::cout << base::ArrayOrEmpty(*keys, "keys")
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(30) << "ID" << std::setw(26) << "SLUG" << std::setw(24)
            << "CATALOG" << std::setw(6) << "OWNER" << std::setw(7) << "ACTIVE" << std::setw(8)
            << "FORWARD" << std::setw(7) << "INJECT" << std::setw(5) << "AUTO" << std::setw(7)
            << "USABLE"
            << "SCOPE\n";
  for (const nlohmann::json& key : base::ArrayOrEmpty(*keys, "keys")) {
    std::cout << std::setw(30) << Text(key, "id") << std::setw(26) << Text(key, "slug")
              << std::setw(24) << Text(key, "catalog_slug") << std::setw(6)
              << Text(base::ObjectOrEmpty(key, "owner"), "type") << std::setw(7)
              << YesNo(key, "active") << std::setw(8) << YesNo(key, "forward_access_token")
              << std::setw(7) << YesNo(key, "inject_delegation_token") << std::setw(5)
              << YesNo(key, "auto_connected") << std::setw(7) << YesNo(key, "usable")
              << Text(key, "delegation_token_scope") << "\n";
  }
  return 0;
}

struct AddSshOptions {
  std::string label;
  std::string host;
  int port = 22;
  std::string node_id;
  bool node_key = false;
  std::vector<std::string> principals;
};

int RunAddSsh(const NyxidGlobalOptions& global, const AddSshOptions& options) {
  if (!options.node_key) {
    std::cerr << "nyxid: --node-key is required: the node holds the private key, NyxID never "
                 "does\n";
    return 1;
  }
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  const nlohmann::json body = {{"label", options.label},
                               {"host", options.host},
                               {"port", options.port},
                               {"node_id", options.node_id},
                               {"principals", options.principals},
                               {"node_key", true}};
  auto service = NyxidCall(*session, "POST", "/api/v1/ssh-services", body);
  if (!service.ok()) return ReportNyxidError(service.status(), global.json());
  if (global.output == "json") {
    std::cout << service->dump(2) << "\n";
  } else {
    std::cout << "SSH service " << Text(*service, "slug") << " (" << Text(*service, "id")
              << ") via node " << Text(*service, "node_id")
              << "\nnext, on the node: nyxid node ssh-credentials add --service "
              << Text(*service, "slug") << " --principal P --key-file K --host "
              << Text(*service, "host") << " --port " << base::IntOr(*service, "port", 22) << "\n";
  }
  return 0;
}

}  // namespace

void AddNyxidServiceCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* service = app.add_subcommand("service", "routes (UserServices) you can see");
  service->require_subcommand(1);
  CLI::App* list = service->add_subcommand("list", "list your routes and their policy");
  list->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  list->callback([&global, &exit_code] { exit_code = RunServiceList(global); });

  auto ssh = std::make_shared<AddSshOptions>();
  CLI::App* add_ssh = service->add_subcommand("add-ssh", "a private SSH service via your node");
  add_ssh->add_option("--label", ssh->label, "a readable name (its slug follows)")->required();
  add_ssh->add_option("--host", ssh->host, "the SSH target's host, as the node sees it")
      ->required();
  add_ssh->add_option("--port", ssh->port, "the SSH target's port")->check(CLI::Range(1, 65535));
  add_ssh->add_option("--via-node", ssh->node_id, "the node (nyxid node list)")->required();
  add_ssh->add_flag("--node-key", ssh->node_key, "the node holds the key (required)");
  add_ssh->add_option("--principals", ssh->principals, "Unix users a call may name")
      ->required()
      ->delimiter(',');
  add_ssh->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  add_ssh->callback([&global, &exit_code, ssh] { exit_code = RunAddSsh(global, *ssh); });
}

}  // namespace aevatar::cli
