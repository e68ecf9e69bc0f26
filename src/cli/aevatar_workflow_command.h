#ifndef AEVATAR_CLI_AEVATAR_WORKFLOW_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_WORKFLOW_COMMAND_H_

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace aevatar::cli {

// `aevatar workflow save FILE | run ID|--file FILE [--input K=V]... [--wait stream]
//  | stop RUN | show RUN | list [--status S] [--workflow W] [--limit N] [--cursor C]
//  | watch RUN | triggers WORKFLOW_ID`, each with --json.
struct WorkflowOptions {
  std::string url;
  std::string file;
  std::string workflow_id;
  std::string run_id;
  std::vector<std::string> inputs;
  std::string wait = "none";
  bool json = false;  // print the server's JSON (one object per line for streams)
  // list
  std::string status;
  std::string list_workflow;
  int limit = 0;  // 0: the server's default page
  std::string cursor;
};

struct WorkflowCommands {
  CLI::App* save = nullptr;
  CLI::App* run = nullptr;
  CLI::App* stop = nullptr;
  CLI::App* show = nullptr;
  CLI::App* list = nullptr;
  CLI::App* watch = nullptr;
  CLI::App* triggers = nullptr;
  // Whether one of them was given.
  bool parsed() const;
};

WorkflowCommands AddWorkflowCommand(CLI::App& app, WorkflowOptions& options);
// Returns the exit code: 0 when the run (or command) succeeded, 1 otherwise,
// 2 for bad arguments.
int RunWorkflowCommand(const WorkflowCommands& commands, const WorkflowOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_WORKFLOW_COMMAND_H_
