// MCP tools/call: code_execute through the executor's durable /executions
// API (so the client's cancel reaches the sandbox), codex_exec through the
// same ManagedCodex and private_ssh gate as POST /api/tools/codex_exec.
#include "aevatar/api/mcp_calls.h"

#include <chrono>
#include <thread>
#include <utility>

#include "absl/time/time.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/api/api_support.h"
#include "aevatar/approvals/approval.h"
#include "aevatar/approvals/private_ssh_gate.h"
#include "aevatar/clients/execution_replies.h"
#include "aevatar/clients/executions_transport.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/private_ssh_run.h"
#include "aevatar/mcp/mcp_protocol.h"
#include "aevatar/tools/code_execute.h"
#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// The MCP meta key that carries a person's approval of a private_ssh call
// (the HTTP API's Approval-Id header).
constexpr char kApprovalMetaKey[] = "aevatar/approval_id";
// How long a stopped execution is watched for its terminal status.
constexpr auto kStopWatch = std::chrono::seconds(30);

// The HTTP API's problem+json object for `status`, as the tool's failure.
json FailureResult(const McpCall& call, const absl::Status& status,
                   const json& extra = json::object()) {
  RequestNote note;
  note.diagnostic_id = call.diagnostic_id;
  http::Response problem = Problem(status, note);
  json body = json::parse(problem.body, nullptr, false);
  if (!body.is_object()) body = {{"code", "INTERNAL"}, {"diagnostic_id", call.diagnostic_id}};
  for (const auto& [key, value] : extra.items()) body[key] = value;
  base::Log(base::LogLevel::kInfo, "mcp.tool_error", call.diagnostic_id,
            {{"code", body.value("code", "")}, {"diagnostic_id", call.diagnostic_id}});
  return ToolFailure(body);
}

bool IsTerminalStatus(const std::string& status) {
  return status == "succeeded" || status == "failed" || status == "cancelled" ||
         status == "outcome_uncertain";
}

// The status of `reply` to GET /executions/{id}, or "" when it says nothing
// usable (a transport failure is retried by the next poll).
absl::StatusOr<std::string> PolledStatus(const NyxidReply& reply) {
  if (reply.status == 0 || reply.status >= 500) return std::string();
  if (reply.status != 200) return UpstreamError(reply);
  auto status = ParseExecutionStatus(reply.body);
  if (!status.ok()) return status.status();
  return status->status;
}

// The client cancelled: the executor kills the run; its terminal status is
// watched for a bounded while so the log says whether the stop landed.
void StopExecution(const McpCall& call, ExecutionsTransport& transport,
                   const std::string& operation_id) {
  const int64_t deadline_ms = base::NowUnixMs() + 30'000;
  transport.Cancel(operation_id, deadline_ms);
  std::string last;
  const auto until = SteadyClock::now() + kStopWatch;
  while (SteadyClock::now() < until) {
    auto status = PolledStatus(transport.Status(operation_id, ""));
    if (status.ok() && !status->empty()) last = *status;
    if (IsTerminalStatus(last)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  base::Log(base::LogLevel::kInfo, "mcp.call_cancelled", call.diagnostic_id,
            {{"tool", "code_execute"}, {"execution_status", last.empty() ? "unknown" : last}});
}

std::optional<json> RunCodeExecute(const McpCall& call, const json& arguments) {
  const HttpApiDeps& deps = *call.deps;
  auto args = ParseCodeExecuteArgs(arguments.dump());
  if (!args.ok()) return FailureResult(call, args.status());
  auto route = AdmitCodeExecutionRoute(*deps.nyxid, *call.caller, deps.chrono_catalog_id,
                                       /*fresh_admission=*/true, call.diagnostic_id);
  if (!route.ok()) return FailureResult(call, route.status());
  ProxyExecutionsTransport transport(deps.nyxid, call.caller->credential, route->slug,
                                     route->user_service_id);
  NyxidReply submitted = transport.Submit(base::RandomId("mcp_"), ExecutorRequestBody(*args));
  if (submitted.status != 200 && submitted.status != 202) {
    return FailureResult(call, UpstreamError(submitted));
  }
  auto receipt = ParseExecutionReceipt(submitted.body);
  if (!receipt.ok()) return FailureResult(call, receipt.status());
  const std::string op = receipt->operation_id;
  std::string status = receipt->status;
  // The run's own limit ends it; this only bounds a silent executor.
  const auto deadline = SteadyClock::now() + std::chrono::seconds(args->timeout_secs + 120);
  while (!IsTerminalStatus(status)) {
    if (call.cancelled->WaitForNotificationWithTimeout(absl::Seconds(1))) {
      StopExecution(call, transport, op);
      return std::nullopt;
    }
    if (SteadyClock::now() > deadline) {
      return FailureResult(
          call, base::ApiError(absl::StatusCode::kDeadlineExceeded, "EXECUTOR_UNREACHABLE",
                               "the execution's status stopped arriving", 504));
    }
    auto polled = PolledStatus(transport.Status(op, ""));
    if (!polled.ok()) return FailureResult(call, polled.status());
    if (!polled->empty()) status = *polled;
    call.progress("code_execute: " + status);
  }
  if (status == "cancelled" || status == "outcome_uncertain") {
    return FailureResult(
        call, base::ApiError(absl::StatusCode::kAborted,
                             status == "cancelled" ? "code_execution_cancelled"
                                                   : "code_execution_outcome_uncertain",
                             "the execution ended " + status + " without a result", 409));
  }
  auto answer = InteractiveResult(transport.Result(op), call.diagnostic_id);
  if (!answer.ok()) return FailureResult(call, answer.status());
  return ToolSuccess(*answer);
}

// private_ssh: as POST /api/tools/codex_exec, a person approves the exact
// call first; the approval's id comes back in params._meta.
json RunPrivateSshCall(const McpCall& call, const CodexExecArgs& args, const json& meta) {
  const HttpApiDeps& deps = *call.deps;
  if (deps.approvals == nullptr) {
    return FailureResult(call, ManagedError(kTargetNotConfigured,
                                            "the private_ssh target is not configured on this "
                                            "aevatar host"));
  }
  std::string approval_id;
  if (auto given = meta.find(kApprovalMetaKey); given != meta.end()) {
    if (!given->is_string() || !IsApprovalId(given->get<std::string>())) {
      return FailureResult(call,
                           base::ApiError(absl::StatusCode::kInvalidArgument, "APPROVAL_ID_INVALID",
                                          "_meta.aevatar/approval_id must be an approval id", 400));
    }
    approval_id = given->get<std::string>();
  }
  auto gate =
      GatePrivateSsh(*deps.approvals, call.caller->user_id, args, approval_id, base::NowUnixMs());
  if (!gate.ok()) return FailureResult(call, gate.status());
  if (!gate->approved) {
    return ToolSuccess({{"status", "approval_required"},
                        {"approval_id", gate->approval.id},
                        {"call_digest", gate->approval.call_digest},
                        {"expires_at_ms", gate->approval.expires_at_ms},
                        {"remediation",
                         "a person approves it (aevatar approvals approve ID, or the page /ui); "
                         "then repeat this call with _meta {\"aevatar/approval_id\": ID}"}});
  }
  auto result = RunPrivateSsh(*deps.nyxid, call.caller->credential, args);
  if (!result.ok()) return FailureResult(call, result.status());
  return ToolSuccess(*result);
}

std::optional<json> RunCodexExec(const McpCall& call, const json& arguments, const json& meta) {
  const HttpApiDeps& deps = *call.deps;
  auto args = ParseCodexExecArgs(arguments.dump());
  if (!args.ok()) return FailureResult(call, args.status());
  if (args->target == CodexTarget::kPrivateSsh) return RunPrivateSshCall(call, *args, meta);
  if (deps.codex == nullptr) {
    return FailureResult(call, ManagedError(kManagedTargetDisabled,
                                            "this aevatar host does not expose the "
                                            "managed_sandbox target"));
  }
  // The run blocks for minutes; this thread reports progress meanwhile. The
  // client's cancel reaches ManagedCodex, which has chrono-sandbox kill the
  // run (POST /codex/runs/{run_id}/cancel through NyxID).
  absl::StatusOr<ManagedCodexResult> result = absl::UnknownError("not run");
  absl::Notification done;
  std::thread runner([&] {
    result = deps.codex->Execute(call.caller->user_id, *args,
                                 "codex_exec:" + base::RandomId("mcp_"), call.diagnostic_id,
                                 std::nullopt, call.caller->allowed_services, call.cancelled);
    done.Notify();
  });
  const auto start = SteadyClock::now();
  while (!done.WaitForNotificationWithTimeout(absl::Seconds(1))) {
    if (call.cancelled->HasBeenNotified()) continue;
    const auto secs =
        std::chrono::duration_cast<std::chrono::seconds>(SteadyClock::now() - start).count();
    call.progress("codex_exec: running for " + std::to_string(secs) + " s");
  }
  runner.join();
  if (call.cancelled->HasBeenNotified()) {
    // The MCP client gets no answer to a call it cancelled (docs/mcp.md);
    // the log says how the run ended ("cancelled" once chrono killed it).
    base::Log(
        base::LogLevel::kInfo, "mcp.call_cancelled", call.diagnostic_id,
        {{"tool", "codex_exec"},
         {"execution_status", result.ok() ? result->status : base::ApiCode(result.status())}});
    return std::nullopt;
  }
  if (!result.ok()) return FailureResult(call, result.status());
  if (absl::Status outcome = ManagedOutcome(*result); !outcome.ok()) {
    return FailureResult(call, outcome, {{"result", result->ToJson()}});
  }
  return ToolSuccess(result->ToJson());
}

}  // namespace

bool IsMcpTool(const std::string& name) { return name == "code_execute" || name == "codex_exec"; }

std::optional<json> RunMcpToolCall(const McpCall& call, const std::string& name,
                                   const json& arguments, const json& meta) {
  if (name == "code_execute") return RunCodeExecute(call, arguments);
  return RunCodexExec(call, arguments, meta);
}

}  // namespace aevatar::orchestrator
