#ifndef AEVATAR_CLI_AEVATAR_COMMANDS_H_
#define AEVATAR_CLI_AEVATAR_COMMANDS_H_

#include <cstdint>
#include <string>

#include "aevatar/api/service.h"
#include "cli/embedded_stack.h"

namespace CLI {
class App;
}

// The `aevatar` binary's subcommands. Each Add* registers flags on `app`;
// each Run* returns the process exit code.
namespace aevatar::cli {

using UpOptions = EmbeddedStackOptions;
CLI::App* AddUpCommand(CLI::App& app, UpOptions& options);
int RunUpCommand(const UpOptions& options);

CLI::App* AddAevatarServeCommand(CLI::App& app, orchestrator::ServiceConfig& config);
int RunAevatarServeCommand(const orchestrator::ServiceConfig& config);

struct ClientOptions {
  std::string url;    // aevatar URL; else the session's / AEVATAR_URL
  bool json = false;  // print the server's JSON instead of text
  // login
  std::string username;
  bool password_stdin = false;
  std::string credentials_file;  // `aevatar up`'s credentials.json
  // exec
  std::string language;
  std::string code;
  std::string file;
  std::string stdin_file;
  int timeout_secs = 180;
  std::string runtime;  // a runtime environment's name; "": the language's default
  // readiness
  std::string capability = "code_execute";
};
CLI::App* AddLoginCommand(CLI::App& app, ClientOptions& options);
int RunLoginCommand(const ClientOptions& options);
CLI::App* AddExecCommand(CLI::App& app, ClientOptions& options);
int RunExecCommand(const ClientOptions& options);
CLI::App* AddReadinessCommand(CLI::App& app, ClientOptions& options);
int RunReadinessCommand(const ClientOptions& options);
CLI::App* AddToolsCommand(CLI::App& app, ClientOptions& options);
int RunToolsCommand(const ClientOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_COMMANDS_H_
