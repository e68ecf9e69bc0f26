// aevatar login | exec | readiness | tools: the CLI against a running aevatar.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "base/json_read.h"
#include "base/utf8.h"
#include "cli/aevatar_commands.h"
#include "cli/aevatar_session.h"
#include "cli/read_file.h"
#include "cli/server_replies.h"

namespace aevatar::cli {
namespace {

constexpr int kBadArguments = 2;

int Fail(const std::string& message, int code = 1) {
  std::cerr << "aevatar: " << message << "\n";
  return code;
}

absl::StatusOr<std::string> LoginPassword(const ClientOptions& options) {
  if (!options.credentials_file.empty()) {
    std::string text;
    if (!ReadWholeFile(options.credentials_file, text)) {
      return absl::InvalidArgumentError("cannot read " + options.credentials_file);
    }
    auto credentials = base::ParseJsonObject(text);
    auto entry = credentials.ok() ? base::RequiredObject(*credentials, options.username)
                                  : credentials.status();
    auto password = entry.ok() ? base::RequiredString(**entry, "password") : entry.status();
    if (!password.ok()) {
      return absl::InvalidArgumentError("no entry '" + options.username + "' with a password in " +
                                        options.credentials_file);
    }
    return password;
  }
  if (options.password_stdin) {
    std::string password;
    std::getline(std::cin, password);
    return password;
  }
  return absl::InvalidArgumentError("give --password-stdin or --credentials-file");
}

}  // namespace

CLI::App* AddLoginCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* login = app.add_subcommand("login", "Log in through NyxID and remember the session");
  login->add_option("--url", options.url, "aevatar URL, e.g. http://127.0.0.1:8082")->required();
  login->add_option("--username", options.username, "NyxID username")->required();
  login->add_flag("--password-stdin", options.password_stdin, "Read the password from stdin");
  login->add_option("--credentials-file", options.credentials_file,
                    "Take the password from `aevatar up`'s credentials.json");
  login->add_flag("--json", options.json, "Print {username, session} as JSON");
  return login;
}

int RunLoginCommand(const ClientOptions& options) {
  auto password = LoginPassword(options);
  if (!password.ok()) return Fail(std::string(password.status().message()), kBadArguments);
  http::ClientRequest info;
  info.url = options.url + "/api/info";
  auto info_response = http::Fetch(info);
  if (!info_response.ok() || info_response->status != 200) {
    return Fail("cannot reach aevatar at " + options.url);
  }
  const std::string nyxid_url = base::StringOr(ParsedOrNull(info_response->body), "nyxid_url", "");
  if (nyxid_url.empty()) return Fail("aevatar at " + options.url + " names no NyxID URL");
  http::ClientRequest login;
  login.method = "POST";
  login.url = nyxid_url + "/api/v1/auth/login";
  login.headers.Set("Content-Type", "application/json");
  login.body = nlohmann::json{{"username", options.username}, {"password", *password}}.dump();
  auto response = http::Fetch(login);
  if (!response.ok()) return Fail("cannot reach NyxID at " + nyxid_url);
  if (response->status != 200) return PrintProblem(*response);
  const std::string token = base::StringOr(ParsedOrNull(response->body), "access_token", "");
  if (token.empty()) return Fail("NyxID returned no access token");
  if (absl::Status st = SaveSession({options.url, token}); !st.ok()) {
    return Fail(std::string(st.message()));
  }
  if (options.json) {
    std::cout << nlohmann::json{{"username", options.username}, {"session", SessionPath()}}.dump()
              << "\n";
    return 0;
  }
  std::cout << "logged in as " << options.username << " (session in " << SessionPath() << ")\n";
  return 0;
}

CLI::App* AddExecCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* exec = app.add_subcommand("exec", "Run a program through the code_execute tool");
  exec->add_option("--url", options.url, "aevatar URL (default: the session's)");
  exec->add_option("--language", options.language, "python|javascript|typescript|bash")->required();
  auto* code = exec->add_option("-c,--code", options.code, "The program's source");
  auto* file = exec->add_option("--file", options.file, "Read the source from this file");
  code->excludes(file);
  exec->add_option("--stdin-file", options.stdin_file, "Feed this file to the program's stdin");
  exec->add_option("--timeout-secs", options.timeout_secs, "1..600 (default 180)");
  exec->add_option("--runtime", options.runtime,
                   "A runtime environment the operator offers (see `aevatar tools`); default: the "
                   "language's own");
  exec->add_flag("--json", options.json,
                 "Print the whole result as JSON (stdout, stderr, exit code, verdict, diagnostic "
                 "id)");
  return exec;
}

int RunExecCommand(const ClientOptions& options) {
  nlohmann::json body = {{"language", options.language}, {"timeout_secs", options.timeout_secs}};
  std::string source = options.code;
  if (!options.file.empty() && !ReadWholeFile(options.file, source)) {
    return Fail("cannot read " + options.file, kBadArguments);
  }
  if (source.empty()) return Fail("give the program with -c CODE or --file PATH", kBadArguments);
  body["source"] = source;
  if (!options.runtime.empty()) body["runtime"] = options.runtime;
  if (!options.stdin_file.empty()) {
    std::string input;
    if (!ReadWholeFile(options.stdin_file, input)) {
      return Fail("cannot read " + options.stdin_file, kBadArguments);
    }
    body["stdin"] = input;
  }
  // The request is JSON text: bytes that are not UTF-8 cannot travel in it
  // unchanged (and would make the encoder throw).
  if (!base::IsValidUtf8(source) || !base::IsValidUtf8(body.value("stdin", ""))) {
    return Fail("the program and its stdin must be UTF-8 (the request is JSON)", kBadArguments);
  }
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response = CallAevatar(*session, "POST", "/api/tools/code_execute", body.dump(),
                              std::chrono::seconds(options.timeout_secs + 60));
  if (response.status != 200) return PrintProblem(response);
  const nlohmann::json result = ParsedOrNull(response.body);
  if (options.json) {
    std::cout << result.dump() << "\n";
    return ExecExitCode(result);
  }
  std::cout << base::StringOr(result, "stdout", "") << std::flush;
  std::cerr << base::StringOr(result, "stderr", "") << std::flush;
  // A failed run names its diagnostic id: what an operator looks up in the
  // logs of aevatar and the executor.
  std::cerr << ExecFailureSummary(result) << std::flush;
  return ExecExitCode(result);
}

CLI::App* AddReadinessCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* readiness = app.add_subcommand("readiness", "Is a capability ready for this caller?");
  readiness->add_option("capability", options.capability, "code_execute | codex_exec")->required();
  readiness->add_option("--url", options.url, "aevatar URL (default: the session's)");
  readiness->add_flag("--json", options.json, "Print the server's JSON");
  return readiness;
}

namespace {

// "  runtimes: NAME (LANGUAGE), …" when `document` lists runtime environments.
void PrintRuntimes(const nlohmann::json& document) {
  std::string line;
  for (const auto& runtime : base::ArrayOrEmpty(document, "runtimes")) {
    line += (line.empty() ? "" : ", ") + base::StringOr(runtime, "name", "") + " (" +
            base::StringOr(runtime, "language", "") + ")";
  }
  if (!line.empty()) std::cout << "  runtimes: " << line << "\n";
}

}  // namespace

int RunReadinessCommand(const ClientOptions& options) {
  if (options.capability != "code_execute" && options.capability != "codex_exec") {
    return Fail("unknown capability '" + options.capability + "'", kBadArguments);
  }
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response =
      CallAevatar(*session, "GET", "/api/capabilities/" + options.capability + "/readiness");
  if (response.status != 200) return PrintProblem(response);
  const nlohmann::json readiness = ParsedOrNull(response.body);
  const bool ready = base::BoolOr(readiness, "ready", false);
  if (options.json) {
    std::cout << readiness.dump() << "\n";
    return ready ? 0 : 1;
  }
  std::cout << options.capability << ": "
            << (ready ? "ready" : base::StringOr(readiness, "code", "not ready")) << "\n";
  PrintRuntimes(readiness);
  if (!ready) {
    std::cout << "remediation: " << base::StringOr(readiness, "remediation", "") << "\n"
              << "diagnostic id: " << base::StringOr(readiness, "diagnostic_id", "") << "\n";
  }
  return ready ? 0 : 1;
}

CLI::App* AddToolsCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* tools = app.add_subcommand("tools", "List the tools and their selection rules");
  tools->add_option("--url", options.url, "aevatar URL (default: the session's)");
  tools->add_flag("--json", options.json, "Print the server's JSON");
  return tools;
}

int RunToolsCommand(const ClientOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response = CallAevatar(*session, "GET", "/api/tools");
  if (response.status != 200) return PrintProblem(response);
  const nlohmann::json tools = ParsedOrNull(response.body);
  if (options.json) {
    std::cout << tools.dump() << "\n";
    return 0;
  }
  for (const auto& tool : base::ArrayOrEmpty(tools, "tools")) {
    std::cout << base::StringOr(tool, "name", "") << " ("
              << base::StringOr(tool, "capability_class", "") << ")\n  "
              << base::StringOr(tool, "description", "") << "\n";
    PrintRuntimes(tool);
  }
  return 0;
}

}  // namespace aevatar::cli
