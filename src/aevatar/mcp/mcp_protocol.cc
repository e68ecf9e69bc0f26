#include "aevatar/mcp/mcp_protocol.h"

#include <utility>

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kServerName[] = "aevatar";
constexpr char kServerVersion[] = "1.0.0";

constexpr char kInstructions[] =
    "aevatar runs code and agents in isolated sandboxes. Exact source code to execute -> "
    "code_execute. A natural-language task -> codex_exec with target managed_sandbox. A task that "
    "must act on a real host -> codex_exec with target private_ssh, which a person approves "
    "first. Listing tools or routes is discovery, not execution.";

bool IsId(const json& id) { return id.is_string() || id.is_number_integer(); }

RpcFailure Failure(int code, std::string message, json id = nullptr) {
  return {code, std::move(message), std::move(id)};
}

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

}  // namespace

bool IsSupportedMcpVersion(std::string_view version) {
  return version == kMcpProtocolVersion || version == "2025-03-26";
}

absl::StatusOr<RpcMessage> ParseRpcMessage(std::string_view body, RpcFailure* failure) {
  const json message = json::parse(body, nullptr, /*allow_exceptions=*/false);
  auto fail = [&](RpcFailure f) -> absl::StatusOr<RpcMessage> {
    *failure = std::move(f);
    return Invalid(failure->message);
  };
  if (message.is_discarded()) return fail(Failure(kRpcParseError, "the body is not JSON"));
  if (message.is_array()) {
    return fail(Failure(kRpcInvalidRequest, "batches are not supported: send one message"));
  }
  if (!message.is_object()) return fail(Failure(kRpcInvalidRequest, "a message is an object"));
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return fail(Failure(kRpcInvalidRequest, "member 'jsonrpc' must be \"2.0\""));
  }
  RpcMessage out;
  auto id = message.find("id");
  const bool has_id = id != message.end() && !id->is_null();
  if (has_id && !IsId(*id)) {
    return fail(Failure(kRpcInvalidRequest, "member 'id' must be a string or an integer"));
  }
  if (has_id) out.id = *id;
  auto method = message.find("method");
  if (method == message.end()) {
    if (!has_id || (!message.contains("result") && !message.contains("error"))) {
      return fail(Failure(kRpcInvalidRequest, "member 'method' is required", out.id));
    }
    out.kind = RpcMessage::Kind::kResponse;
    return out;
  }
  if (!method->is_string()) {
    return fail(Failure(kRpcInvalidRequest, "member 'method' must be a string", out.id));
  }
  out.method = method->get<std::string>();
  out.kind = has_id ? RpcMessage::Kind::kRequest : RpcMessage::Kind::kNotification;
  if (auto params = message.find("params"); params != message.end() && !params->is_null()) {
    if (!params->is_object()) {
      return fail(Failure(kRpcInvalidRequest, "member 'params' must be an object", out.id));
    }
    out.params = *params;
  }
  return out;
}

json RpcResult(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json RpcError(const json& id, int code, std::string_view message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json ProgressNotification(const json& token, int64_t progress, std::string_view message) {
  return {{"jsonrpc", "2.0"},
          {"method", "notifications/progress"},
          {"params", {{"progressToken", token}, {"progress", progress}, {"message", message}}}};
}

std::string NegotiatedVersion(const json& params) {
  if (params.is_object()) {
    auto asked = params.find("protocolVersion");
    if (asked != params.end() && asked->is_string() &&
        IsSupportedMcpVersion(asked->get<std::string>())) {
      return asked->get<std::string>();
    }
  }
  return kMcpProtocolVersion;
}

json InitializeResult(const json& params) {
  return {{"protocolVersion", NegotiatedVersion(params)},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", kServerName}, {"version", kServerVersion}}},
          {"instructions", kInstructions}};
}

json ToolsListResult(const json& catalog) {
  json tools = json::array();
  for (const json& tool : catalog.value("tools", json::array())) {
    tools.push_back({{"name", tool.value("name", "")},
                     {"description", tool.value("description", "")},
                     {"inputSchema", tool.value("input_schema", json::object())}});
  }
  return {{"tools", std::move(tools)}};
}

absl::StatusOr<ToolCallParams> ParseToolCallParams(const json& params) {
  if (!params.is_object()) return Invalid("tools/call needs params {name, arguments}");
  ToolCallParams out;
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return Invalid("params.name must be a string: the tool's name");
  }
  out.name = name->get<std::string>();
  if (auto arguments = params.find("arguments"); arguments != params.end()) {
    if (!arguments->is_object() && !arguments->is_null()) {
      return Invalid("params.arguments must be an object");
    }
    if (arguments->is_object()) out.arguments = *arguments;
  }
  if (auto meta = params.find("_meta"); meta != params.end() && !meta->is_null()) {
    if (!meta->is_object()) return Invalid("params._meta must be an object");
    out.meta = *meta;
    if (auto token = meta->find("progressToken"); token != meta->end() && !token->is_null()) {
      if (!IsId(*token)) return Invalid("params._meta.progressToken must be a string or integer");
      out.progress_token = *token;
    }
  }
  return out;
}

json ToolSuccess(const json& answer) {
  const std::string text = answer.dump(-1, ' ', false, json::error_handler_t::replace);
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})},
          {"structuredContent", answer},
          {"isError", false}};
}

json ToolFailure(const json& problem) {
  std::string text = problem.value("code", "ERROR") + ": " + problem.value("detail", "");
  if (problem.contains("diagnostic_id")) {
    text += " (diagnostic_id " + problem.value("diagnostic_id", "") + ")";
  }
  if (problem.contains("remediation") && problem["remediation"].is_string()) {
    text += ". " + problem["remediation"].get<std::string>();
  }
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})},
          {"structuredContent", problem},
          {"isError", true}};
}

std::string RequestKey(const json& id) { return IsId(id) ? id.dump() : std::string(); }

std::string CancelledRequestKey(const json& params) {
  if (!params.is_object()) return "";
  auto id = params.find("requestId");
  return id == params.end() ? std::string() : RequestKey(*id);
}

}  // namespace aevatar::orchestrator
