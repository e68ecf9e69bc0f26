// `nyxid audit list [--after SEQ] [--output json]`: the admin audit log
// (platform admins).
#include <iomanip>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/clock.h"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"

namespace aevatar::cli {
namespace {

int RunAuditList(const NyxidGlobalOptions& global, int64_t after) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto page = NyxidCall(*session, "GET", "/api/v1/admin/audit?after=" + std::to_string(after));
  if (!page.ok()) return ReportNyxidError(page.status(), global.json());
  if (global.output == "json") {
    std::cout << page->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(6) << "SEQ" << std::setw(26) << "AT" << std::setw(32)
            << "ACTOR" << std::setw(28) << "ACTION"
            << "TARGET\n";
  for (const nlohmann::json& entry : base::ArrayOrEmpty(*page, "entries")) {
    std::cout << std::setw(6) << base::IntOr(entry, "seq", 0) << std::setw(26)
              << base::FormatUtcMillis(base::IntOr(entry, "at_ms", 0)) << std::setw(32)
              << base::StringOr(entry, "actor", "") << std::setw(28)
              << base::StringOr(entry, "action", "") << base::StringOr(entry, "target_type", "")
              << " " << base::StringOr(entry, "target_id", "") << "\n";
  }
  return 0;
}

}  // namespace

void AddNyxidAuditCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  CLI::App* audit = app.add_subcommand("audit", "the admin audit log (platform admins)");
  audit->require_subcommand(1);
  auto after = std::make_shared<int64_t>(0);
  CLI::App* list = audit->add_subcommand("list", "who changed what, oldest first");
  list->add_option("--after", *after, "only entries after this sequence number");
  list->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  list->callback([&global, &exit_code, after] { exit_code = RunAuditList(global, *after); });
}

}  // namespace aevatar::cli
