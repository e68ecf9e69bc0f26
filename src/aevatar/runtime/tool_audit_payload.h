#ifndef AEVATAR_AEVATAR_RUNTIME_TOOL_AUDIT_PAYLOAD_H_
#define AEVATAR_AEVATAR_RUNTIME_TOOL_AUDIT_PAYLOAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "aevatar/runtime/durable_execution.h"
#include "aevatar/runtime/workflow_store.h"
#include "nlohmann/json.hpp"

// The fact of a frozen terminal audit intent (spec: "The frozen intent
// includes the generic terminal result plus an opaque typed tool-owned Any
// payload. That payload preserves the normalized full AgentToolReceipt,
// including subject and provider-resource evidence, together with outcome
// kind, failure stage, mutation and safety facts, failure fields, and
// terminal/retry flags."):
//
//   {"outcome": "succeeded" | "failed" | <typed code>,   generic result
//    "provider_operation_id": …, "exit_code": …,          generic result
//    "tool_payload": {
//      "@type": kCodeExecutePayloadType,
//      "receipt": {"tool": "code_execute", "capability_class": "PlatformBuiltIn",
//                  "call_id", "subject", "credential_kind",
//                  "provider_resource": {"provider": "chrono-sandbox",
//                     "catalog_service_id", "operation_id", "last_status"}},
//      "outcome_kind": completed | program_failed | cancelled |
//                      outcome_uncertain | timeout | rejected,
//      "failure_stage": none | admission | arguments | route_check | submit |
//                       status | result | timeout | cancel | program,
//      "mutation": {"may_have_executed": bool,
//                   "durable_effects": "isolated_runtime_only"},
//      "safety": {"sandboxed": true, "network": "none"},
//      "failure": {"code", "detail"},          (absent when completed)
//      "terminal": true, "retryable": bool}}
//
// No secret is in it: never the source, the idempotency key, a credential or
// the UserService id (the catalog identity names the route kind only).
namespace aevatar::orchestrator {

inline constexpr char kCodeExecutePayloadType[] =
    "type.aevatar.dev/aevatar.code_execute.TerminalPayload.v1";

// What a turn knows about a terminal tool outcome.
struct TerminalOutcome {
  std::string step_id;
  std::string outcome;         // "succeeded", "failed" (the program) or a typed code
  std::string failure_stage;   // see the block above
  std::string detail;          // bounded, no secrets ("" when none)
  PendingOperation operation;  // provider-resource evidence; empty id when never submitted
  std::optional<int64_t> exit_code;
  // The tool the receipt names: "code_execute" (PlatformBuiltIn) or
  // "codex_exec" (RolloutRestrictedPlatform, managed_sandbox).
  std::string tool = "code_execute";
};

// The failure stage of a reconciliation `detail` ("submit: …", "status: …",
// "result: …"); `fallback` for anything else.
std::string StageOfDetail(const std::string& detail, const std::string& fallback);

// The frozen fact of `outcome` for a run (its owner is the receipt's subject).
nlohmann::json TerminalFact(const RunRecord& run, const TerminalOutcome& outcome);

// The adapter's check before a frozen intent is appended: the fact carries a
// tool payload of kCodeExecutePayloadType that agrees with the generic result
// (same outcome, same provider operation, terminal). InvalidArgument naming
// the disagreement otherwise; such an intent is never appended.
absl::Status ValidateTerminalFact(const nlohmann::json& fact);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_TOOL_AUDIT_PAYLOAD_H_
