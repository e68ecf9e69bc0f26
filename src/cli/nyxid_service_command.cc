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
  if (!session.ok()) return ReportNyxidError(session.status());
  auto keys = NyxidCall(*session, "GET", "/api/v1/keys");
  if (!keys.ok()) return ReportNyxidError(keys.status());
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

}  // namespace

void AddNyxidServiceCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* service = app.add_subcommand("service", "routes (UserServices) you can see");
  service->require_subcommand(1);
  CLI::App* list = service->add_subcommand("list", "list your routes and their policy");
  list->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  list->callback([&global, &exit_code] { exit_code = RunServiceList(global); });
}

}  // namespace aevatar::cli
