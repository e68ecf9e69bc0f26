// `nyxid login` and `nyxid whoami`.
#include <termios.h>
#include <unistd.h>

#include <iostream>

#include "CLI/CLI.hpp"
#include "base/clock.h"
#include "base/json_read.h"
#include "cli/nyxid_commands.h"

namespace aevatar::cli {
namespace {

struct LoginOptions {
  std::string username;
  bool password_stdin = false;
};

// Reads one line from stdin; with a terminal, without echo.
std::string ReadPassword(bool prompt) {
  const bool tty = ::isatty(STDIN_FILENO) == 1;
  termios saved{};
  if (tty) {
    if (prompt) std::cerr << "Password: " << std::flush;
    ::tcgetattr(STDIN_FILENO, &saved);
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  }
  std::string password;
  std::getline(std::cin, password);
  if (tty) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    std::cerr << "\n";
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  return password;
}

int RunLogin(const NyxidGlobalOptions& global, LoginOptions options) {
  auto url = ResolveNyxidUrl(global);
  if (!url.ok()) return ReportNyxidError(url.status(), global.json());
  if (options.username.empty()) {
    std::cerr << "Username: " << std::flush;
    std::getline(std::cin, options.username);
  }
  const std::string password = ReadPassword(!options.password_stdin);
  auto response = NyxidCall({*url, ""}, "POST", "/api/v1/auth/login",
                            nlohmann::json{{"username", options.username}, {"password", password}});
  if (!response.ok()) return ReportNyxidError(response.status(), global.json());
  const std::string token = base::StringOr(*response, "access_token", "");
  const int64_t expires_in = base::IntOr(*response, "expires_in", 0);
  if (token.empty())
    return ReportNyxidError(absl::InternalError("the broker sent no token"), global.json());
  if (absl::Status st = SaveNyxidLogin(*url, token, base::NowUnixSecs() + expires_in); !st.ok()) {
    return ReportNyxidError(st, global.json());
  }
  if (global.json()) {
    // Never the token: it stays in the 0600 session file.
    std::cout << nlohmann::json{{"url", *url},
                                {"username", options.username},
                                {"expires_at", base::NowUnixSecs() + expires_in},
                                {"session", NyxidConfigDir() + "/session.json"}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "Logged in to " << *url << " as " << options.username << "\n";
  return 0;
}

int RunWhoami(const NyxidGlobalOptions& global) {
  auto session = ResolveNyxidSession(global);
  if (!session.ok()) return ReportNyxidError(session.status(), global.json());
  auto me = NyxidCall(*session, "GET", "/api/v1/me");
  if (!me.ok()) return ReportNyxidError(me.status(), global.json());
  if (global.output == "json") {
    std::cout << me->dump(2) << "\n";
    return 0;
  }
  std::cout << "user:       " << base::StringOr(*me, "username", "") << " ("
            << base::StringOr(*me, "id", "") << ")\n"
            << "credential: " << base::StringOr(*me, "credential_kind", "") << "\n"
            << "url:        " << session->url << "\n";
  if (base::BoolOr(*me, "platform_admin", false)) std::cout << "role:       platform admin\n";
  for (const nlohmann::json& org : base::ArrayOrEmpty(*me, "orgs")) {
    std::cout << "org:        " << base::StringOr(org, "slug", "") << " ("
              << base::StringOr(org, "role", "") << ")\n";
  }
  return 0;
}

}  // namespace

void AddNyxidAccountCommands(CLI::App& app, NyxidGlobalOptions& global, int& exit_code) {
  auto login_options = std::make_shared<LoginOptions>();
  CLI::App* login = app.add_subcommand("login", "log in and keep the access token (0600 file)");
  login->add_option("--username,-u", login_options->username, "account name (prompted if absent)");
  login->add_flag("--password-stdin", login_options->password_stdin,
                  "read the password from stdin without a prompt");
  login->callback(
      [&global, login_options, &exit_code] { exit_code = RunLogin(global, *login_options); });

  CLI::App* whoami = app.add_subcommand("whoami", "show the account behind the credential");
  whoami->add_option("--output,-o", global.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  whoami->callback([&global, &exit_code] { exit_code = RunWhoami(global); });
}

}  // namespace aevatar::cli
