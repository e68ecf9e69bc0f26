// `aevatar mcp`: the stdio transport of aevatar's MCP server, a relay to
// POST /mcp (docs/mcp.md).
//
// Theory of operation. The main thread reads one JSON-RPC message per line.
// `initialize` is relayed at once and its Mcp-Session-Id kept for every later
// message; any other request is relayed on its own thread, so a long
// tools/call streams its progress while the next line (a
// notifications/cancelled for it, say) is relayed meanwhile. Every message
// aevatar answers (JSON, or each event of a text/event-stream) is written to
// stdout as one line under a lock. At the end of stdin the session is
// deleted, which cancels its calls still running.
#include "cli/aevatar_mcp_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "aevatar/mcp/mcp_protocol.h"
#include "cli/aevatar_session.h"
#include "http/client.h"
#include "nlohmann/json.hpp"

namespace aevatar::cli {
namespace {

using nlohmann::json;
using orchestrator::RpcMessage;

// A tools/call may run for the executor's longest timeout and Codex's.
constexpr auto kCallTimeout = std::chrono::minutes(30);

class StdioRelay {
 public:
  explicit StdioRelay(AevatarSession session) : session_(std::move(session)) {}

  // Writes one message as one line of stdout.
  void Emit(const json& message) {
    const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace);
    absl::MutexLock lock(&out_mu_);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

  // Relays `body` (one message) and emits what aevatar answers; for a
  // request (`id` not null) a failure of the exchange becomes its error.
  void Relay(const std::string& body, const json& id, bool initialize) {
    http::ClientRequest request = Request("POST");
    request.body = body;
    request.headers.Set("Content-Type", "application/json");
    request.headers.Set("Accept", "application/json, text/event-stream");
    bool event_stream = false;
    int status = 0;
    std::string buffer;
    auto response = http::FetchStreaming(
        request,
        [&](const http::ClientResponse& head) {
          status = head.status;
          event_stream =
              absl::StrContains(head.headers.Get("Content-Type").value_or(""), "text/event-stream");
          if (initialize && head.status == 200) {
            absl::MutexLock lock(&session_mu_);
            mcp_session_ = head.headers.Get("Mcp-Session-Id").value_or("");
          }
        },
        [&](std::string_view chunk) {
          buffer.append(chunk);
          if (event_stream) EmitEvents(buffer);
          return true;
        });
    if (!response.ok()) {
      if (!id.is_null()) EmitError(id, "cannot reach aevatar: " + response.status().ToString());
      return;
    }
    if (event_stream || buffer.empty()) return;
    const json answer = json::parse(buffer, nullptr, false);
    if (answer.is_object() && answer.contains("jsonrpc")) {
      if (initialize) RememberVersion(answer);
      Emit(answer);
    } else if (!id.is_null()) {
      // problem+json (401 when the session expired, say): its code and
      // diagnostic id go to the client as the request's error.
      EmitError(id, "aevatar answered HTTP " + std::to_string(status), answer);
    }
  }

  // The answer to a request past InFlight's bound; the host may send it
  // again once one of its calls has answered.
  void EmitBusy(const json& id) {
    json error = orchestrator::RpcError(
        id, orchestrator::kRpcInternalError,
        "aevatar mcp: too many requests in flight; send it again when one has answered");
    error["error"]["data"] = {{"code", "MCP_TOO_MANY_REQUESTS"}};
    Emit(error);
  }

  // Ends the session (aevatar cancels its calls in flight).
  void Close() {
    http::ClientRequest request = Request("DELETE");
    if (request.headers.Get("Mcp-Session-Id")) (void)http::Fetch(request);
  }

 private:
  http::ClientRequest Request(const std::string& method) {
    http::ClientRequest request;
    request.method = method;
    request.url = session_.url + "/mcp";
    request.timeout = kCallTimeout;
    request.headers.Set("Authorization", "Bearer " + session_.token);
    absl::MutexLock lock(&session_mu_);
    if (!mcp_session_.empty()) request.headers.Set("Mcp-Session-Id", mcp_session_);
    if (!version_.empty()) request.headers.Set("MCP-Protocol-Version", version_);
    return request;
  }

  void RememberVersion(const json& answer) {
    const json& result = answer.contains("result") ? answer["result"] : json();
    if (!result.is_object()) return;
    absl::MutexLock lock(&session_mu_);
    version_ = result.value("protocolVersion", "");
  }

  // Emits each complete event's data from `buffer` and keeps the rest.
  void EmitEvents(std::string& buffer) {
    for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
      const std::string event = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      std::string data;
      for (size_t at = 0; at < event.size();) {
        size_t eol = event.find('\n', at);
        if (eol == std::string::npos) eol = event.size();
        std::string_view line(event.data() + at, eol - at);
        if (line.rfind("data:", 0) == 0) {
          line.remove_prefix(line.size() > 5 && line[5] == ' ' ? 6 : 5);
          if (!data.empty()) data += '\n';
          data.append(line);
        }
        at = eol + 1;
      }
      const json message = json::parse(data, nullptr, false);
      if (message.is_object()) Emit(message);
    }
  }

  void EmitError(const json& id, const std::string& message, const json& problem = nullptr) {
    json error = orchestrator::RpcError(id, orchestrator::kRpcInternalError, message);
    if (problem.is_object()) {
      json data = json::object();
      for (const char* key : {"code", "detail", "diagnostic_id", "remediation"}) {
        if (problem.contains(key)) data[key] = problem[key];
      }
      error["error"]["data"] = data;
      if (data.contains("code") && data["code"].is_string()) {
        error["error"]["message"] = message + ": " + data["code"].get<std::string>();
      }
    }
    Emit(error);
  }

  const AevatarSession session_;
  absl::Mutex out_mu_;
  absl::Mutex session_mu_;
  std::string mcp_session_ ABSL_GUARDED_BY(session_mu_);
  std::string version_ ABSL_GUARDED_BY(session_mu_);
};

// Counts the requests relaying on their own threads, bounded. A request past
// the bound is refused at once rather than waited for: stdin must keep being
// read, or a notifications/cancelled for a running call would never arrive.
class InFlight {
 public:
  static constexpr int kMax = 64;

  bool TryEnter() {
    absl::MutexLock lock(&mu_);
    if (count_ >= kMax) return false;
    ++count_;
    return true;
  }
  void Leave() {
    absl::MutexLock lock(&mu_);
    --count_;
  }
  // Waits until none is relaying, or `limit` passed.
  void AwaitNone(absl::Duration limit) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &InFlight::IsNone), limit);
  }

 private:
  bool IsNone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_ == 0; }
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

// The session, with an Agent Key from the environment in place of a login.
absl::StatusOr<AevatarSession> McpSession(const std::string& url) {
  const char* agent_key = std::getenv("AEVATAR_AGENT_KEY");
  auto session = LoadSession(url);
  if (agent_key == nullptr || *agent_key == '\0') return session;
  AevatarSession out;
  out.url = session.ok() ? session->url : url;
  if (out.url.empty()) {
    if (const char* env = std::getenv("AEVATAR_URL"); env != nullptr) out.url = env;
  }
  if (out.url.empty()) return absl::FailedPreconditionError("no aevatar URL: pass --url");
  out.token = agent_key;
  return out;
}

}  // namespace

CLI::App* AddMcpCommand(CLI::App& app, McpOptions& options) {
  CLI::App* mcp = app.add_subcommand(
      "mcp",
      "Serve the tools over MCP on stdin/stdout (for agent hosts)\n"
      "Example: {\"command\": \"aevatar\", \"args\": [\"mcp\"]} in the host's MCP config");
  mcp->add_option("--url", options.url, "aevatar URL (default: the session's / AEVATAR_URL)");
  return mcp;
}

int RunMcpCommand(const McpOptions& options) {
  auto session = McpSession(options.url);
  if (!session.ok()) {
    std::cerr << "aevatar mcp: " << session.status().message() << "\n";
    return 1;
  }
  StdioRelay relay(*session);
  InFlight in_flight;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    orchestrator::RpcFailure failure;
    auto message = orchestrator::ParseRpcMessage(line, &failure);
    if (!message.ok()) {
      relay.Emit(orchestrator::RpcError(failure.id, failure.code, failure.message));
      continue;
    }
    const bool request = message->kind == RpcMessage::Kind::kRequest;
    if (request && message->method != "initialize") {
      if (!in_flight.TryEnter()) {
        relay.EmitBusy(message->id);
        continue;
      }
      // Detached: `relay` and `in_flight` live until _Exit below, and a
      // finished call leaves nothing to join.
      std::thread([&relay, &in_flight, line, id = message->id] {
        relay.Relay(line, id, false);
        in_flight.Leave();
      }).detach();
    } else {
      relay.Relay(line, request ? message->id : json(), message->method == "initialize");
    }
  }
  // End of input: answers on their way get a moment to arrive (a host may
  // close stdin right after its last request); runs still going after that
  // are cancelled with the session.
  in_flight.AwaitNone(absl::Seconds(5));
  relay.Close();
  std::fflush(stdout);
  // Calls still relaying end with the session; nothing is left to write.
  std::_Exit(0);
}

}  // namespace aevatar::cli
