// aevatar login | exec | readiness | tools: the CLI against a running aevatar.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "cli/aevatar_commands.h"
#include "cli/aevatar_session.h"

namespace aevatar::cli {
namespace {

constexpr int kBadArguments = 2;

bool ReadWholeFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

int Fail(const std::string& message, int code = 1) {
  std::cerr << "aevatar: " << message << "\n";
  return code;
}

absl::StatusOr<std::string> LoginPassword(const ClientOptions& options) {
  if (!options.credentials_file.empty()) {
    std::ifstream in(options.credentials_file);
    nlohmann::json credentials = nlohmann::json::parse(in, nullptr, false);
    if (!credentials.is_object() || !credentials.contains(options.username)) {
      return absl::InvalidArgumentError("no entry '" + options.username + "' in " +
                                        options.credentials_file);
    }
    return credentials[options.username].value("password", "");
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
  const std::string nyxid_url =
      nlohmann::json::parse(info_response->body, nullptr, false).value("nyxid_url", "");
  http::ClientRequest login;
  login.method = "POST";
  login.url = nyxid_url + "/api/v1/auth/login";
  login.headers.Set("Content-Type", "application/json");
  login.body = nlohmann::json{{"username", options.username}, {"password", *password}}.dump();
  auto response = http::Fetch(login);
  if (!response.ok()) return Fail("cannot reach NyxID at " + nyxid_url);
  if (response->status != 200) return PrintProblem(*response);
  const std::string token =
      nlohmann::json::parse(response->body, nullptr, false).value("access_token", "");
  if (token.empty()) return Fail("NyxID returned no access token");
  if (absl::Status st = SaveSession({options.url, token}); !st.ok()) {
    return Fail(std::string(st.message()));
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
  if (!options.stdin_file.empty()) {
    std::string input;
    if (!ReadWholeFile(options.stdin_file, input)) {
      return Fail("cannot read " + options.stdin_file, kBadArguments);
    }
    body["stdin"] = input;
  }
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response = CallAevatar(*session, "POST", "/api/tools/code_execute", body.dump(),
                              std::chrono::seconds(options.timeout_secs + 60));
  if (response.status != 200) return PrintProblem(response);
  nlohmann::json result = nlohmann::json::parse(response.body, nullptr, false);
  std::cout << result.value("stdout", "") << std::flush;
  std::cerr << result.value("stderr", "") << std::flush;
  if (result.value("timed_out", false)) return 124;
  return result.value("exit_code", 1);
}

CLI::App* AddReadinessCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* readiness = app.add_subcommand("readiness", "Is a capability ready for this caller?");
  readiness->add_option("capability", options.capability, "code_execute")->required();
  readiness->add_option("--url", options.url, "aevatar URL (default: the session's)");
  return readiness;
}

int RunReadinessCommand(const ClientOptions& options) {
  if (options.capability != "code_execute") {
    return Fail("unknown capability '" + options.capability + "'", kBadArguments);
  }
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response = CallAevatar(*session, "GET", "/api/capabilities/code_execute/readiness");
  if (response.status != 200) return PrintProblem(response);
  nlohmann::json readiness = nlohmann::json::parse(response.body, nullptr, false);
  const bool ready = readiness.value("ready", false);
  std::cout << "code_execute: " << (ready ? "ready" : readiness.value("code", "not ready")) << "\n";
  if (!ready) {
    std::cout << "remediation: " << readiness.value("remediation", "") << "\n"
              << "diagnostic id: " << readiness.value("diagnostic_id", "") << "\n";
  }
  return ready ? 0 : 1;
}

CLI::App* AddToolsCommand(CLI::App& app, ClientOptions& options) {
  CLI::App* tools = app.add_subcommand("tools", "List the tools and their selection rules");
  tools->add_option("--url", options.url, "aevatar URL (default: the session's)");
  return tools;
}

int RunToolsCommand(const ClientOptions& options) {
  auto session = LoadSession(options.url);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto response = CallAevatar(*session, "GET", "/api/tools");
  if (response.status != 200) return PrintProblem(response);
  nlohmann::json tools = nlohmann::json::parse(response.body, nullptr, false);
  for (const auto& tool : tools.value("tools", nlohmann::json::array())) {
    std::cout << tool.value("name", "") << " (" << tool.value("capability_class", "") << ")\n  "
              << tool.value("description", "") << "\n";
  }
  return 0;
}

}  // namespace aevatar::cli
