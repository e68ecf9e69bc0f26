#ifndef AEVATAR_NYXID_NODE_AGENT_TOOL_RUN_H_
#define AEVATAR_NYXID_NODE_AGENT_TOOL_RUN_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

// Runs one of the host's own tools (ssh, ssh-keyscan) for the node: stdin
// from memory (a memfd, never a file), stdout and stderr captured up to a
// bound, killed at a deadline.
namespace aevatar::nyxid::node {

struct ToolRun {
  int exit_code = -1;      // -1 when killed by a signal
  bool timed_out = false;  // the deadline passed and the tool was killed
  std::string out;
  std::string err;
};

// `argv[0]` is looked up in PATH. NotFound when it is not there.
absl::StatusOr<ToolRun> RunTool(const std::vector<std::string>& argv,
                                const std::string& stdin_bytes, std::chrono::milliseconds timeout,
                                size_t max_output_bytes);

}  // namespace aevatar::nyxid::node

#endif  // AEVATAR_NYXID_NODE_AGENT_TOOL_RUN_H_
