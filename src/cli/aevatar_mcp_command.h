#ifndef AEVATAR_CLI_AEVATAR_MCP_COMMAND_H_
#define AEVATAR_CLI_AEVATAR_MCP_COMMAND_H_

#include <string>

namespace CLI {
class App;
}

namespace aevatar::cli {

struct McpOptions {
  std::string url;  // aevatar URL; else the session's / AEVATAR_URL
};

// `aevatar mcp`: an MCP server on stdin/stdout (newline-delimited JSON-RPC)
// for agent hosts that start their tools as processes. It forwards every
// message to the running aevatar's POST /mcp with the logged-in session's
// token, or the Agent Key in AEVATAR_AGENT_KEY (AEVATAR_TOKEN works too), and
// writes back every answer and progress notification. Logs go to stderr.
// Returns 0 when stdin ends.
CLI::App* AddMcpCommand(CLI::App& app, McpOptions& options);
int RunMcpCommand(const McpOptions& options);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_MCP_COMMAND_H_
