#ifndef AEVATAR_AEVATAR_RUNTIME_DURABLE_EXECUTION_H_
#define AEVATAR_AEVATAR_RUNTIME_DURABLE_EXECUTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/clients/executions_transport.h"
#include "http/message.h"
#include "nlohmann/json.hpp"

// Durable workflow code_execute: the pure reconciliation of one operation
// against the executor's /executions API, one actor turn at a time.
//
// Theory of operation. The workflow actor owns the operation. Each turn it
// hands RunTurn its persisted PendingOperation and gets back a TurnDecision:
// the state to persist and what to do next. The actor persists `pending`
// BEFORE it schedules the callback (or publishes completion), so a crash at
// any point replays a turn from persisted state:
//
//   no receipt ──Submit(key)──> 202 ──persist receipt──> Status(id, ETag) ─┐
//     │  ^  429/503/5xx/lost response: same key again         ^           │
//     └──┘                                                     └─304/active┘
//   Status succeeded|failed ──> Result(id) ──> kCompleted (409 NOT_TERMINAL: pending)
//   Status cancelled|outcome_uncertain, 404 (id known), 410, 409 KEY_REUSE,
//   definitive 4xx ──> kTerminal with a typed outcome code, no result fetch.
//
// Rules kept here so no caller can break them: a submit is only ever repeated
// with the same key; once an operation id is known, nothing is submitted
// again (404 is terminal, never a replacement); paths come from the validated
// id, never from receipt URLs; a turn never sleeps, and every retry delay is
// in [1 ms, 30 s] whatever Retry-After says (a read of an operation still in
// progress: [50 ms, 30 s], Retry-After-Ms included).
//
// Secrecy: PendingOperation, TurnDecision::detail and outcome codes never hold
// the idempotency key, source, credential, route identity or UserService id.
namespace aevatar::orchestrator {

inline constexpr int64_t kDefaultRetryDelayMs = 1000;
inline constexpr int64_t kMaxRetryDelayMs = 30000;
inline constexpr int64_t kMinRetryDelayMs = 1;     // the durable scheduler rejects 0
inline constexpr int64_t kMinProgressPollMs = 50;  // ProgressPollDelayMs's floor

// Typed terminal outcome codes (TurnDecision::outcome_code).
inline constexpr char kOutcomeCancelled[] = "code_execution_cancelled";
inline constexpr char kOutcomeUncertain[] = "code_execution_outcome_uncertain";
inline constexpr char kOutcomeIdempotencyConflict[] = "code_execution_idempotency_conflict";
inline constexpr char kOutcomeExpired[] = "code_execution_expired";
inline constexpr char kOutcomeNotFound[] = "code_execution_operation_not_found";
inline constexpr char kOutcomeRejected[] = "code_execution_rejected";
// NyxID refused the exact route on the proxy request: the spec's route
// diagnostic categories (sandbox-execution.md, "Route diagnostics").
inline constexpr char kOutcomeRouteAccessDenied[] = "code_execution_route_access_denied";
inline constexpr char kOutcomeRouteInactive[] = "code_execution_route_inactive";
inline constexpr char kOutcomeRouteMissing[] = "code_execution_route_missing";
// A 202 whose operation id fails ^op_[a-z0-9]{1,64}$ (or a persisted id that does).
inline constexpr char kOutcomeReceiptInvalid[] = "code_execution_receipt_invalid";
// A reply the executor contract does not allow: a receipt status, status
// document or result document of the wrong shape (execution_result.h).
inline constexpr char kOutcomeResponseInvalid[] = "code_execution_response_invalid";
// The step's timeout_ms elapsed before the operation ended (the workflow
// runtime's outcome, not a provider reply).
inline constexpr char kOutcomeStepTimeout[] = "code_execution_step_timeout";

// Returns "tool:v1:operation:" + 64 lowercase hex digits: the SHA-256 of an
// unambiguous encoding of (run_id, step_id, workflow_digest, arguments), the
// arguments in canonical JSON (sorted keys, no spaces). Deterministic: the
// same admitted call always maps to the same key. The key is a secret of the
// runtime secret store: never persist it in actor state, never log it.
std::string OperationIdentity(const std::string& run_id, const std::string& step_id,
                              const std::string& workflow_digest, const nlohmann::json& arguments);

// What the actor persists about one in-flight operation. Holds no secret:
// never the idempotency key, source, credentials or route identity.
struct PendingOperation {
  std::string provider_operation_id;  // "" until a receipt was persisted
  std::string etag;                   // last strong ETag seen, sent as If-None-Match
  std::string last_status;            // queued|running|succeeded|failed|… as last seen
  int64_t expires_at_ms = 0;          // receipt/status expires_at; 0 when unknown
  int64_t submitted_at_ms = 0;        // the actor clock at the first submit attempt
  int attempts = 0;                   // exchanges made for this operation
  // Committed before the first submit is sent: from then on the program may
  // run even while no receipt is persisted (its commit may have been lost).
  bool dispatched = false;

  // Whether a submit may have reached the executor: dispatched, attempted or
  // answered. Before that, nothing ran and nothing needs cancelling.
  bool MayHaveSubmitted() const {
    return dispatched || attempts > 0 || !provider_operation_id.empty();
  }

  // All seven fields, by these names.
  nlohmann::json ToJson() const;
  // The inverse of ToJson. Missing fields take their defaults; a wrong type,
  // a negative number, an invalid non-empty operation id or an ETag with a
  // line break is InvalidArgument (the message never echoes a value).
  static absl::StatusOr<PendingOperation> FromJson(const nlohmann::json& json);
};

enum class TurnKind {
  kReschedule,  // persist `pending`, call back after `delay_ms`
  kCompleted,   // result fetched (program success or program failure): `result`
  kTerminal,    // typed terminal outcome without a result: `outcome_code`
};

struct TurnDecision {
  TurnKind kind = TurnKind::kReschedule;
  PendingOperation pending;  // state to persist (always)
  int64_t delay_ms = 0;      // kReschedule: in [kMinRetryDelayMs, kMaxRetryDelayMs]
  nlohmann::json result;     // kCompleted: WorkflowExecutionResult::ToJson() of the result
  std::string outcome_code;  // kTerminal: one of the kOutcome* codes
  std::string detail;        // short, bounded, no secrets (e.g. "status: HTTP 410")
  int exchanges = 0;         // HTTP exchanges this turn made
};

// Runs one actor turn: at most one submit or status exchange, plus the result
// fetch once the status is terminal. Never sleeps, never loops.
//
// Every reply is read through base/json_read.h: a document of the wrong shape
// is kTerminal response_invalid (never an exception, never an endless poll).
//
// Before a receipt (`pending.provider_operation_id` empty): Submit with
// `idempotency_key` and `submit_body`. 202 with a valid operation id persists
// the receipt (id, ETag, expires_at) and reschedules; 202 with an invalid id
// is kTerminal receipt_invalid, one whose status is not a string is
// response_invalid; 429, 408, 5xx (but 503
// ASYNC_EXECUTION_UNAVAILABLE), a transport failure (status 0) or any other
// unexpected non-4xx reschedule, so the next turn repeats the SAME key;
// 409 IDEMPOTENCY_KEY_REUSE is kTerminal idempotency_conflict; NyxID's
// refusal of the exact route is kTerminal with the spec's route category
// (403 ROUTE_INACTIVE: route_inactive; 404 USER_SERVICE_NOT_FOUND or
// ROUTE_SLUG_MISMATCH: route_missing; any other 401/403:
// route_access_denied); other definitive 4xx are rejected.
//
// After a receipt: Status with If-None-Match = `pending.etag`. 304 keeps the
// last seen status (so a terminal status whose result fetch failed is fetched
// again); a 200 without a known status string is response_invalid;
// queued/running reschedule; succeeded/failed fetch the result -> kCompleted
// with the normalized WorkflowExecutionResult::ToJson() (a malformed result document
// is response_invalid; result-side 409 OPERATION_NOT_TERMINAL, 429, 5xx or a
// transport failure reschedule); cancelled / outcome_uncertain are kTerminal without a
// result fetch; 404 is kTerminal operation_not_found and never a replacement
// submit; 410 is kTerminal expired.
//
// Reschedule delays come from the last reply's Retry-After via
// BoundedRetryDelayMs, or ProgressPollDelayMs while the operation is in
// progress. `now_ms` is the actor's clock (recorded as
// submitted_at_ms on the first submit attempt).
TurnDecision RunTurn(ExecutionsTransport& transport, const std::string& idempotency_key,
                     const nlohmann::json& submit_body, const PendingOperation& pending,
                     int64_t now_ms);

// Returns Retry-After (delta-seconds) in ms, capped at kMaxRetryDelayMs and at
// least kMinRetryDelayMs. An absent or unparsable value (including the
// HTTP-date form) gives `default_ms`, itself clamped to the same range.
int64_t BoundedRetryDelayMs(const http::Headers& headers, int64_t default_ms = 1000);

// The delay before reading an operation still in progress again (a 202
// receipt, a queued or running status, 409 OPERATION_NOT_TERMINAL):
// BoundedRetryDelayMs, shortened by Retry-After-Ms (chrono-sandbox's hint for
// an operation it expects to end within a second), never below
// kMinProgressPollMs, so no such reply makes a run poll in a tight loop.
// Retries of failures (429, 5xx, transport) use BoundedRetryDelayMs alone:
// only Retry-After sets an overload's backoff.
int64_t ProgressPollDelayMs(const http::Headers& headers);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_DURABLE_EXECUTION_H_
