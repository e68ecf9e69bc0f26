#ifndef AEVATAR_AEVATAR_API_MCP_CALLS_H_
#define AEVATAR_AEVATAR_API_MCP_CALLS_H_

// MCP tools/call on aevatar's side (private to src/aevatar/api): the same
// argument validation, admission and execution as POST /api/tools/*, with
// progress and cancellation.

#include <functional>
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/api/http_api.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

struct McpCall {
  const HttpApiDeps* deps = nullptr;
  const Caller* caller = nullptr;
  std::string diagnostic_id;
  // Called about once a second while the run goes on, with a short status
  // ("code_execute op_…: running"); never with arguments or output.
  std::function<void(const std::string& status)> progress;
  // Notified when the client cancelled the call.
  const absl::Notification* cancelled = nullptr;
};

// Runs tool `name` with `arguments` (an object) and returns the MCP
// CallToolResult: ToolSuccess of the HTTP API's answer, or ToolFailure of
// its problem+json (typed code and diagnostic id). Returns nullopt when the
// call was cancelled: the run was stopped (code_execute: the executor's
// cancel; codex_exec: the answer is dropped, see docs/mcp.md) and no
// response is due. Requires IsMcpTool(name); blocks for the run.
std::optional<nlohmann::json> RunMcpToolCall(const McpCall& call, const std::string& name,
                                             const nlohmann::json& arguments,
                                             const nlohmann::json& meta);

// Returns true for the tools MCP offers: code_execute and codex_exec.
bool IsMcpTool(const std::string& name);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_API_MCP_CALLS_H_
