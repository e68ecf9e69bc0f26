// POST /mcp: the Model Context Protocol's Streamable HTTP transport
// (docs/mcp.md). One JSON-RPC message per POST; a request's answer is
// application/json, or for tools/call, when the client accepts it, a
// text/event-stream carrying its progress notifications and then the answer.
// Every POST is authenticated like the rest of the API (bearer or Agent
// Key); a session (Mcp-Session-Id, from initialize) belongs to its caller.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "aevatar/admission/tool_catalog.h"
#include "aevatar/api/api_support.h"
#include "aevatar/api/mcp_calls.h"
#include "aevatar/mcp/mcp_protocol.h"
#include "aevatar/mcp/mcp_sessions.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";

http::Response RpcJson(int status, const json& message) { return NoStore(Json(status, message)); }

http::Response Accepted() {
  http::Response response;
  response.status = 202;
  return response;
}

std::string SseEvent(const json& message) {
  return "event: message\ndata: " + message.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

// A browser page elsewhere must not drive a local aevatar (DNS rebinding):
// an Origin, when sent, names this very host.
bool OriginAllowed(const http::Request& request) {
  const auto origin = request.headers.Get("Origin");
  if (!origin) return true;
  const std::string host = request.headers.Get("Host").value_or("");
  return !host.empty() && (*origin == "http://" + host || *origin == "https://" + host);
}

// Ends a registered call's entry in its session when destroyed.
class CallRegistration {
 public:
  CallRegistration(std::shared_ptr<McpSessions> sessions, std::string session, std::string key)
      : sessions_(std::move(sessions)), session_(std::move(session)), key_(std::move(key)) {}
  ~CallRegistration() { sessions_->End(session_, key_); }
  CallRegistration(const CallRegistration&) = delete;
  CallRegistration& operator=(const CallRegistration&) = delete;

 private:
  std::shared_ptr<McpSessions> sessions_;
  std::string session_;
  std::string key_;
};

// tools/call: runs the tool, as JSON, or as an event stream when the client
// accepts one (progress notifications first when it asked for them).
http::Response HandleToolCall(const HttpApiDeps& deps, const http::Request& request,
                              const Caller& caller, const std::string& session,
                              const RpcMessage& message, RequestNote& note) {
  auto params = ParseToolCallParams(message.params);
  if (!params.ok()) {
    return RpcJson(200,
                   RpcError(message.id, kRpcInvalidParams, std::string(params.status().message())));
  }
  if (!IsMcpTool(params->name)) {
    return RpcJson(200, RpcError(message.id, kRpcInvalidParams,
                                 "unknown tool: tools/list names code_execute and codex_exec"));
  }
  const std::string key = RequestKey(message.id);
  std::shared_ptr<McpSessions::Call> registered = deps.mcp_sessions->Begin(session, key);
  if (registered == nullptr) {
    return RpcJson(200, RpcError(message.id, kRpcInvalidRequest,
                                 "a call with this id is already in flight in this session"));
  }
  // The call leaves the registry when the last copy of `run` goes, even when
  // the server never starts the stream (the client left before the headers).
  auto registration = std::make_shared<CallRegistration>(deps.mcp_sessions, session, key);
  auto run = [&deps, caller, registration, registered, params = *params, id = message.id,
              diagnostic_id = note.diagnostic_id](const http::ChunkWriter* write) {
    int64_t progress = 0;
    McpCall call{&deps, &caller, diagnostic_id, nullptr, &registered->cancelled};
    call.progress = [&](const std::string& status) {
      if (write == nullptr || params.progress_token.is_null()) return;
      // A peer that went away cancels the call as a cancel notification would.
      if (!(*write)(SseEvent(ProgressNotification(params.progress_token, ++progress, status))) &&
          !registered->cancelled.HasBeenNotified()) {
        registered->cancelled.Notify();
      }
    };
    std::optional<json> result = RunMcpToolCall(call, params.name, params.arguments, params.meta);
    return result ? std::optional<json>(RpcResult(id, std::move(*result))) : std::nullopt;
  };
  const bool stream =
      absl::StrContains(request.headers.Get("Accept").value_or(""), "text/event-stream");
  if (!stream) {
    std::optional<json> answer = run(nullptr);
    // Cancelled: the protocol sends no response; the body is empty.
    return answer ? RpcJson(200, *answer) : Accepted();
  }
  http::Response response;
  response.status = 200;
  response.headers.Set("Content-Type", "text/event-stream");
  response.headers.Set("Cache-Control", "no-store");
  response.stream = [run](const http::ChunkWriter& write) {
    std::optional<json> answer = run(&write);
    if (answer) write(SseEvent(*answer));
  };
  return response;
}

http::Response HandleMcpPost(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (!OriginAllowed(request)) {
    return RpcJson(403, RpcError(nullptr, kRpcInvalidRequest, "Origin is not this host"));
  }
  if (auto version = request.headers.Get(kVersionHeader);
      version && !IsSupportedMcpVersion(*version)) {
    return RpcJson(400, RpcError(nullptr, kRpcInvalidRequest,
                                 "unsupported MCP-Protocol-Version; this server speaks " +
                                     std::string(kMcpProtocolVersion)));
  }
  RpcFailure failure;
  auto message = ParseRpcMessage(request.body, &failure);
  if (!message.ok()) return RpcJson(400, RpcError(failure.id, failure.code, failure.message));
  if (message->kind == RpcMessage::Kind::kRequest && message->method == "initialize") {
    const json result = InitializeResult(message->params);
    const std::string session =
        deps.mcp_sessions->Open(caller->user_id, result.value("protocolVersion", ""));
    http::Response response = RpcJson(200, RpcResult(message->id, result));
    response.headers.Set(kSessionHeader, session);
    return response;
  }
  const std::string session = request.headers.Get(kSessionHeader).value_or("");
  if (session.empty()) {
    return RpcJson(400, RpcError(message->id, kRpcInvalidRequest,
                                 "Mcp-Session-Id is required: send initialize first"));
  }
  if (!deps.mcp_sessions->Find(session, caller->user_id).ok()) {
    return RpcJson(404, RpcError(message->id, kRpcInvalidRequest,
                                 "no such MCP session: send initialize again"));
  }
  if (message->kind == RpcMessage::Kind::kResponse) return Accepted();
  if (message->kind == RpcMessage::Kind::kNotification) {
    if (message->method == "notifications/cancelled") {
      const std::string key = CancelledRequestKey(message->params);
      if (!key.empty()) deps.mcp_sessions->Cancel(session, caller->user_id, key);
    }
    return Accepted();
  }
  if (message->method == "ping") return RpcJson(200, RpcResult(message->id, json::object()));
  if (message->method == "tools/list") {
    return RpcJson(200, RpcResult(message->id, ToolsListResult(ToolCatalogJson(deps.runtimes))));
  }
  if (message->method == "tools/call") {
    return HandleToolCall(deps, request, *caller, session, *message, note);
  }
  return RpcJson(200, RpcError(message->id, kRpcMethodNotFound,
                               "method not found: this server offers tools only"));
}

// DELETE /mcp: the client ends its session; its calls in flight are cancelled.
http::Response HandleMcpDelete(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  const std::string session = request.headers.Get(kSessionHeader).value_or("");
  if (!deps.mcp_sessions->Close(session, caller->user_id).ok()) {
    return RpcJson(404, RpcError(nullptr, kRpcInvalidRequest, "no such MCP session"));
  }
  return Json(200, {{"status", "closed"}});
}

}  // namespace

void AddMcpRoutes(const AddRoute& add) {
  // The tools' own checks apply a restricted key's services, as for
  // POST /api/tools/*.
  add("POST", "/mcp", HandleMcpPost, CallerScope::kExecution);
  add("DELETE", "/mcp", HandleMcpDelete, CallerScope::kExecution);
}

}  // namespace aevatar::orchestrator
