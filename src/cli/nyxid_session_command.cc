// `nyxid logout`, `nyxid passwd` and `nyxid keys rotate`: ending sessions
// and rotating the broker's signing key.
#include <cstdio>
#include <iostream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"

namespace aevatar::cli {
namespace {

int RunLogout(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto done = NyxidCall(*session, "POST", "/api/v1/auth/logout");
  // The local session goes even when the broker cannot be told.
  std::remove((NyxidConfigDir() + "/session.json").c_str());
  if (!done.ok()) return ReportNyxidError(done.status(), global.json());
  if (global.json()) {
    std::cout << nlohmann::json{{"logged_out", true}, {"url", session->url}}.dump() << "\n";
    return 0;
  }
  std::cout << "Logged out: every token of this account is revoked\n";
  return 0;
}

// Two lines on stdin: the current password, then the new one.
int RunPasswd(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  std::string current;
  std::string next;
  std::cerr << "Current password, then the new one (a line each): " << std::flush;
  std::getline(std::cin, current);
  std::getline(std::cin, next);
  auto changed = NyxidCall(*session, "POST", "/api/v1/auth/password",
                           nlohmann::json{{"current_password", current}, {"new_password", next}});
  if (!changed.ok()) return ReportNyxidError(changed.status(), global.json());
  std::remove((NyxidConfigDir() + "/session.json").c_str());
  if (global.json()) {
    std::cout << nlohmann::json{{"password_changed", true}, {"logged_out", true}}.dump() << "\n";
    return 0;
  }
  std::cout << "Password changed: every token of this account is revoked; log in again\n";
  return 0;
}

int RunRotate(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto rotated = NyxidCall(*session, "POST", "/api/v1/admin/signing-keys/rotate");
  if (!rotated.ok()) return ReportNyxidError(rotated.status(), global.json());
  if (global.json()) {
    // Key ids only: the broker never sends key material here.
    std::cout << nlohmann::json{{"kid", base::StringOr(*rotated, "kid", "")},
                                {"previous_kid", base::StringOr(*rotated, "previous_kid", "")}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "Signing with " << base::StringOr(*rotated, "kid", "") << "; "
            << base::StringOr(*rotated, "previous_kid", "")
            << " stays published until the tokens it signed expire\n";
  return 0;
}

}  // namespace

void AddNyxidSessionCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  app.add_subcommand("logout", "revoke every token of this account and forget the login")
      ->callback([&global, &exit_code] { exit_code = RunLogout(global); });
  app.add_subcommand("passwd", "change the password (revokes every token of this account)")
      ->callback([&global, &exit_code] { exit_code = RunPasswd(global); });
  CLI::App* keys = app.add_subcommand("keys", "the broker's signing keys (platform admins)");
  keys->require_subcommand(1);
  keys->add_subcommand("rotate", "sign with a fresh key; the old one stays published")
      ->callback([&global, &exit_code] { exit_code = RunRotate(global); });
}

}  // namespace aevatar::cli
