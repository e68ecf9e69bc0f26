// `nyxid agent-key create|list|revoke`.
#include <iomanip>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"

namespace aevatar::cli {
namespace {

struct CreateOptions {
  std::string label;
  std::vector<std::string> allowed_services;
};

int RunCreate(const NyxidGlobalOptions& global, const CreateOptions& options) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  nlohmann::json body = {{"label", options.label}};
  if (!options.allowed_services.empty()) body["allowed_services"] = options.allowed_services;
  auto key = NyxidCall(*session, "POST", "/api/v1/agent-keys", body);
  if (!key.ok()) return ReportNyxidError(key.status(), global.json());
  if (global.output == "json") {
    std::cout << key->dump(2) << "\n";
    return 0;
  }
  std::cout << "id:  " << base::StringOr(*key, "id", "") << "\n"
            << "key: " << base::StringOr(*key, "key", "") << "\n"
            << "Store the key now: it is shown only once.\n";
  return 0;
}

int RunList(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto keys = NyxidCall(*session, "GET", "/api/v1/agent-keys");
  if (!keys.ok()) return ReportNyxidError(keys.status(), global.json());
  if (global.output == "json") {
    std::cout << base::ArrayOrEmpty(*keys, "agent_keys")
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(30) << "ID" << std::setw(24) << "LABEL" << std::setw(16)
            << "PREFIX" << std::setw(9) << "REVOKED"
            << "ALLOWED\n";
  for (const nlohmann::json& key : base::ArrayOrEmpty(*keys, "agent_keys")) {
    std::string allowed;
    for (const nlohmann::json& entry : base::ArrayOrEmpty(key, "allowed_services")) {
      if (entry.is_string()) allowed += (allowed.empty() ? "" : ",") + entry.get<std::string>();
    }
    std::cout << std::setw(30) << base::StringOr(key, "id", "") << std::setw(24)
              << base::StringOr(key, "label", "") << std::setw(16)
              << base::StringOr(key, "key_prefix", "") << std::setw(9)
              << (base::BoolOr(key, "revoked", false) ? "yes" : "no")
              << (allowed.empty() ? "*" : allowed) << "\n";
  }
  return 0;
}

int RunRevoke(const NyxidGlobalOptions& global, const std::string& id) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto revoked = NyxidCall(*session, "DELETE", "/api/v1/agent-keys/" + id);
  if (!revoked.ok()) return ReportNyxidError(revoked.status(), global.json());
  if (global.json()) {
    std::cout << nlohmann::json{{"id", id}, {"revoked", true}}.dump() << "\n";
    return 0;
  }
  std::cout << "Revoked " << id << "\n";
  return 0;
}

}  // namespace

void AddNyxidAgentKeyCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* agent_key = app.add_subcommand("agent-key", "Agent Keys (nyxid_ag_…) for programs");
  agent_key->require_subcommand(1);

  auto create_options = std::make_shared<CreateOptions>();
  CLI::App* create = agent_key->add_subcommand("create", "create a key (shown once)");
  create->add_option("--label", create_options->label, "what the key is for")->required();
  create->add_option("--allow", create_options->allowed_services,
                     "user service id or slug the key may use (repeatable; default: all)");
  create->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  create->callback(
      [&global, create_options, &exit_code] { exit_code = RunCreate(global, *create_options); });

  CLI::App* list = agent_key->add_subcommand("list", "list your keys (never the keys themselves)");
  list->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  list->callback([&global, &exit_code] { exit_code = RunList(global); });

  auto revoke_id = std::make_shared<std::string>();
  CLI::App* revoke = agent_key->add_subcommand("revoke", "revoke a key by id");
  revoke->add_option("id", *revoke_id, "the key's id (ak_…)")->required();
  revoke->callback([&global, revoke_id, &exit_code] { exit_code = RunRevoke(global, *revoke_id); });
}

}  // namespace aevatar::cli
