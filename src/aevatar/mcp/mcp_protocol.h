#ifndef AEVATAR_AEVATAR_MCP_MCP_PROTOCOL_H_
#define AEVATAR_AEVATAR_MCP_MCP_PROTOCOL_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// The Model Context Protocol's messages as aevatar's MCP server speaks them
// (docs/mcp.md): JSON-RPC 2.0, one message per line on stdio and one per
// POST on Streamable HTTP. Nothing here does I/O; the transports
// (api/mcp_api.cc, cli/aevatar_mcp_command.cc) move the bytes.
//
// Theory of operation. A client sends `initialize` (the server answers the
// version it will speak, its capabilities: tools only), then
// `notifications/initialized`, then any number of `tools/list` and
// `tools/call`. A call whose params carry `_meta.progressToken` gets
// `notifications/progress` while it runs; `notifications/cancelled` naming
// the call's id stops its run, and the server then sends no response for it.
// A tool's own failure (bad arguments, a refused route, a failed run) is a
// successful JSON-RPC response whose result has `isError: true` and the
// typed problem (code, detail, diagnostic_id); only a malformed message or
// wrong-typed protocol params is a JSON-RPC error.
namespace aevatar::orchestrator {

// JSON-RPC 2.0 error codes.
inline constexpr int kRpcParseError = -32700;
inline constexpr int kRpcInvalidRequest = -32600;
inline constexpr int kRpcMethodNotFound = -32601;
inline constexpr int kRpcInvalidParams = -32602;
inline constexpr int kRpcInternalError = -32603;

// The version this server prefers and answers a client asking for one it
// does not speak. The @modelcontextprotocol/sdk client accepts it.
inline constexpr char kMcpProtocolVersion[] = "2025-06-18";

// Returns true for the protocol versions this server speaks: 2025-06-18 and
// 2025-03-26 (the same messages for the tools capability).
bool IsSupportedMcpVersion(std::string_view version);

// One JSON-RPC message received from a client.
struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  nlohmann::json id;      // string or integer; null for a notification
  std::string method;     // "" for a response
  nlohmann::json params;  // an object, or null when absent
};

// A message that is not JSON-RPC: what to answer and with which code.
struct RpcFailure {
  int code = kRpcInvalidRequest;
  std::string message;
  nlohmann::json id;  // the request's id when it could be read, else null
};

// Parses one message. A body that is not JSON is kRpcParseError; a batch
// (an array: not part of 2025-06-18), a wrong "jsonrpc", an id that is not a
// string or an integer, a method that is not a string, or params that are
// not an object is kRpcInvalidRequest. Never throws.
absl::StatusOr<RpcMessage> ParseRpcMessage(std::string_view body, RpcFailure* failure);

// {"jsonrpc": "2.0", "id": id, "result": result}.
nlohmann::json RpcResult(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": id, "error": {"code", "message"}}.
nlohmann::json RpcError(const nlohmann::json& id, int code, std::string_view message);
// notifications/progress for `token` (a string or integer from the
// request's _meta); `progress` must grow from one notification to the next.
nlohmann::json ProgressNotification(const nlohmann::json& token, int64_t progress,
                                    std::string_view message);

// The `initialize` result: the client's protocolVersion when supported,
// else kMcpProtocolVersion; capabilities {tools: {listChanged: false}};
// serverInfo; instructions with the tools' selection rules.
nlohmann::json InitializeResult(const nlohmann::json& params);
// The version InitializeResult answers for `params`.
std::string NegotiatedVersion(const nlohmann::json& params);

// The `tools/list` result for GET /api/tools' catalog (ToolCatalogJson):
// every tool with its name, description and input_schema as inputSchema, so
// the two lists never differ.
nlohmann::json ToolsListResult(const nlohmann::json& catalog);

// tools/call's params, read strictly: `name` a string, `arguments` an
// object (absent: {}), `_meta.progressToken` a string or integer (absent:
// null). Anything else is InvalidArgument whose message says which member,
// for a kRpcInvalidParams error.
struct ToolCallParams {
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();
  nlohmann::json progress_token;  // null: the client wants no progress
  nlohmann::json meta = nlohmann::json::object();
};
absl::StatusOr<ToolCallParams> ParseToolCallParams(const nlohmann::json& params);

// A successful call's result: the tool's JSON answer as structuredContent and
// as its text.
nlohmann::json ToolSuccess(const nlohmann::json& answer);
// A failed call's result (isError: true): `problem` is the HTTP API's
// problem+json object for the same failure (code, detail, diagnostic_id,
// remediation when known); its text leads with the code.
nlohmann::json ToolFailure(const nlohmann::json& problem);

// notifications/cancelled's requestId as a registry key (the id's JSON
// text), or "" when params name none.
std::string CancelledRequestKey(const nlohmann::json& params);
// A request id as a registry key (its JSON text).
std::string RequestKey(const nlohmann::json& id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_MCP_MCP_PROTOCOL_H_
