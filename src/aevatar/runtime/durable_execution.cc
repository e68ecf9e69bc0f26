#include "aevatar/runtime/durable_execution.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/time/time.h"
#include "aevatar/runtime/execution_result.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

// A header's value as a non-negative decimal integer (blanks around it
// allowed), saturating at `cap`; nullopt when absent or anything else.
std::optional<int64_t> HeaderInteger(const http::Headers& headers, const char* name, int64_t cap) {
  const auto value = headers.Get(name);
  if (!value) return std::nullopt;
  std::string_view text = *value;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  int64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;  // includes Retry-After's HTTP-date form
    // Saturate instead of overflowing: anything past the cap is the cap.
    number = std::min<int64_t>(number * 10 + (c - '0'), cap);
  }
  return number;
}

inline constexpr char kIdentityPrefix[] = "tool:v1:operation:";
// Domain separation: a digest of these fields can never collide with a
// digest made for another purpose from the same strings.
inline constexpr char kIdentityDomain[] = "aevatar.code_execute.operation.v1\n";
inline constexpr size_t kMaxEtagBytes = 256;
inline constexpr size_t kMaxCodeBytes = 64;

bool IsKnownActiveOrDone(const std::string& status) {
  return status == "queued" || status == "running" || status == "succeeded" || status == "failed";
}

bool IsKnownStatus(const std::string& status) {
  return IsKnownActiveOrDone(status) || status == "cancelled" || status == "outcome_uncertain";
}

// The provider's problem code when it is a plain UPPER_SNAKE token; anything
// else is dropped so a reply can never smuggle arbitrary text into `detail`.
std::string ProblemCode(const NyxidReply& reply) {
  if (!reply.body.is_object()) return "";
  auto read = base::OptionalString(reply.body, "code");
  if (!read.ok() || !*read) return "";
  const std::string code = **read;
  if (code.empty() || code.size() > kMaxCodeBytes) return "";
  const bool plain = std::all_of(code.begin(), code.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  return plain ? code : "";
}

std::string Describe(const char* exchange, const NyxidReply& reply) {
  if (reply.status == 0) return std::string(exchange) + ": exchange failed";
  std::string text = std::string(exchange) + ": HTTP " + std::to_string(reply.status);
  const std::string code = ProblemCode(reply);
  if (!code.empty()) text += " " + code;
  return text;
}

// RFC 3339 timestamp -> Unix ms; 0 when absent, of another type or
// unparsable (it is metadata: nothing is decided on it).
int64_t TimestampMs(const nlohmann::json& body, const char* name) {
  const std::string text = base::StringOr(body, name, "");
  if (text.empty()) return 0;
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) return 0;
  return absl::ToUnixMillis(time);
}

// Keeps the ETag of `reply` when it is one we can safely echo back.
void TakeEtag(const NyxidReply& reply, PendingOperation& pending) {
  const auto etag = reply.headers.Get("ETag");
  if (!etag || etag->empty() || etag->size() > kMaxEtagBytes) return;
  if (etag->find_first_of("\r\n") != std::string::npos) return;
  pending.etag = *etag;
}

bool IsRetryable(int status) {
  return status == 0 || status == 408 || status == 429 || status >= 500;
}

void RescheduleAfter(TurnDecision& decision, int64_t delay_ms, std::string detail) {
  decision.kind = TurnKind::kReschedule;
  decision.delay_ms = delay_ms;
  decision.detail = std::move(detail);
}

// A retry (429, 5xx, a transport failure): Retry-After alone, so an upstream
// cannot shorten an overload's backoff.
void Reschedule(TurnDecision& decision, const NyxidReply& reply, std::string detail) {
  RescheduleAfter(decision, BoundedRetryDelayMs(reply.headers, kDefaultRetryDelayMs),
                  std::move(detail));
}

// The operation is still in progress (a receipt, a queued or running status,
// a result not ready yet): read it again when chrono-sandbox's hint says.
void RescheduleRead(TurnDecision& decision, const NyxidReply& reply, std::string detail) {
  RescheduleAfter(decision, ProgressPollDelayMs(reply.headers), std::move(detail));
}

void Terminal(TurnDecision& decision, const char* code, std::string detail) {
  decision.kind = TurnKind::kTerminal;
  decision.outcome_code = code;
  decision.detail = std::move(detail);
}

// Maps a reply that is neither a receipt nor a status document: retryable
// failures reschedule, NyxID's refusals of the route end the step with the
// spec's route category, 404/410 end a known operation, and other definitive
// 4xx reject the call.
void Failure(TurnDecision& decision, const char* exchange, const NyxidReply& reply, bool id_known) {
  const std::string detail = Describe(exchange, reply);
  const std::string code = ProblemCode(reply);
  if (reply.status == 503 && code == "ASYNC_EXECUTION_UNAVAILABLE") {
    return Terminal(decision, kOutcomeRejected, detail);  // disabled, not busy
  }
  if (IsRetryable(reply.status)) return Reschedule(decision, reply, detail);
  if (reply.status == 401 || reply.status == 403) {
    return Terminal(decision,
                    code == "ROUTE_INACTIVE" ? kOutcomeRouteInactive : kOutcomeRouteAccessDenied,
                    detail);
  }
  if (reply.status == 404 && (code == "USER_SERVICE_NOT_FOUND" || code == "ROUTE_SLUG_MISMATCH")) {
    return Terminal(decision, kOutcomeRouteMissing, detail);  // NyxID: the route itself is gone
  }
  if (reply.status == 409 && code == "IDEMPOTENCY_KEY_REUSE") {
    return Terminal(decision, kOutcomeIdempotencyConflict, detail);
  }
  if (reply.status == 409 && code == "OPERATION_NOT_TERMINAL") {
    return RescheduleRead(decision, reply, detail);  // stays pending
  }
  // Once the id is known a 404 is an ownership/unknown-operation failure:
  // terminal, and the caller must never submit a replacement.
  if (id_known && reply.status == 404) return Terminal(decision, kOutcomeNotFound, detail);
  if (id_known && reply.status == 410) return Terminal(decision, kOutcomeExpired, detail);
  if (reply.status >= 400) return Terminal(decision, kOutcomeRejected, detail);
  // 1xx/2xx/3xx where none is expected: repeating the same exchange is safe.
  Reschedule(decision, reply, detail + " (unexpected)");
}

void SubmitTurn(ExecutionsTransport& transport, const std::string& key, const nlohmann::json& body,
                int64_t now_ms, TurnDecision& decision) {
  PendingOperation& pending = decision.pending;
  if (pending.submitted_at_ms == 0) pending.submitted_at_ms = now_ms;
  // A repeat after a lost response uses the same key: the executor converges
  // it on the operation the lost response described.
  const NyxidReply reply = transport.Submit(key, body);
  ++decision.exchanges;
  if (reply.status != 202) return Failure(decision, "submit", reply, /*id_known=*/false);
  const auto operation_id = base::RequiredString(reply.body, "operation_id");
  if (!operation_id.ok() || !IsValidProviderOperationId(*operation_id)) {
    // No path is ever built from it; status_url and friends are ignored too.
    return Terminal(decision, kOutcomeReceiptInvalid, "submit: receipt operation id invalid");
  }
  pending.provider_operation_id = *operation_id;
  const auto status = base::OptionalString(reply.body, "status");
  if (!status.ok()) {
    return Terminal(decision, kOutcomeResponseInvalid,
                    "submit: " + std::string(status.status().message()));
  }
  pending.last_status = *status && IsKnownActiveOrDone(**status) ? **status : "queued";
  pending.expires_at_ms = TimestampMs(reply.body, "expires_at");
  TakeEtag(reply, pending);
  RescheduleRead(decision, reply, "submit: HTTP 202 receipt");
}

void FetchResult(ExecutionsTransport& transport, TurnDecision& decision) {
  const NyxidReply reply = transport.Result(decision.pending.provider_operation_id);
  ++decision.exchanges;
  if (reply.status != 200) return Failure(decision, "result", reply, /*id_known=*/true);
  // A terminal operation's result does not change: a malformed one will not
  // heal on a retry, so it ends the step instead of looping.
  auto result = WorkflowExecutionResult::FromJson(reply.body, decision.pending.last_status);
  if (!result.ok()) {
    return Terminal(decision, kOutcomeResponseInvalid,
                    "result: " + std::string(result.status().message()));
  }
  decision.kind = TurnKind::kCompleted;
  decision.result = result->ToJson();
  decision.detail = "result: HTTP 200 " + result->status;
}

void StatusTurn(ExecutionsTransport& transport, TurnDecision& decision) {
  PendingOperation& pending = decision.pending;
  const NyxidReply reply = transport.Status(pending.provider_operation_id, pending.etag);
  ++decision.exchanges;
  std::string status;
  if (reply.status == 304) {
    TakeEtag(reply, pending);
    status = pending.last_status;  // unchanged since the document we last read
    if (!IsKnownActiveOrDone(status)) {
      // Nothing to interpret a 304 against: drop the ETag so the next read
      // gets the whole document instead of another 304.
      pending.etag.clear();
      return Reschedule(decision, reply, "status: HTTP 304 without a known status");
    }
  } else if (reply.status == 200) {
    // A status document without a known status is malformed: it ends the
    // step typed rather than being polled forever. The ETag is only kept for
    // a document we understood, so a 304 always stands for a known status.
    const auto field = base::RequiredString(reply.body, "status");
    if (!field.ok()) {
      return Terminal(decision, kOutcomeResponseInvalid,
                      "status: " + std::string(field.status().message()));
    }
    if (!IsKnownStatus(*field)) {
      return Terminal(decision, kOutcomeResponseInvalid, "status: field 'status' is not known");
    }
    status = *field;
    TakeEtag(reply, pending);
    if (const int64_t expires = TimestampMs(reply.body, "expires_at"); expires != 0) {
      pending.expires_at_ms = expires;
    }
  } else {
    return Failure(decision, "status", reply, /*id_known=*/true);
  }

  pending.last_status = status;
  // Terminal without a result: the program's output is not the outcome here.
  if (status == "cancelled") return Terminal(decision, kOutcomeCancelled, "status: cancelled");
  if (status == "outcome_uncertain") {
    return Terminal(decision, kOutcomeUncertain, "status: outcome_uncertain");
  }
  if (status == "queued" || status == "running") {
    return RescheduleRead(decision, reply, "status: " + status);
  }
  FetchResult(transport, decision);  // succeeded or failed
}

}  // namespace

std::string OperationIdentity(const std::string& run_id, const std::string& step_id,
                              const std::string& workflow_digest, const nlohmann::json& arguments) {
  // Canonical arguments: sorted keys (nlohmann's object order), no spaces,
  // ASCII escapes. Parsed JSON is always valid UTF-8; `replace` only keeps a
  // hand-built invalid string from throwing.
  const std::string canonical =
      arguments.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  // Length-prefixed fields are an unambiguous encoding: no choice of values
  // can make two different tuples serialise the same way.
  std::string material = kIdentityDomain;
  for (const std::string* field : {&run_id, &step_id, &workflow_digest, &canonical}) {
    material += std::to_string(field->size()) + ":" + *field + ";";
  }
  return kIdentityPrefix + base::Sha256Hex(material);
}

nlohmann::json PendingOperation::ToJson() const {
  return nlohmann::json{{"provider_operation_id", provider_operation_id},
                        {"etag", etag},
                        {"last_status", last_status},
                        {"expires_at_ms", expires_at_ms},
                        {"submitted_at_ms", submitted_at_ms},
                        {"attempts", attempts},
                        {"dispatched", dispatched}};
}

absl::StatusOr<PendingOperation> PendingOperation::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return absl::InvalidArgumentError("pending operation is not an object");
  PendingOperation pending;
  auto string_field = [&](const char* name, std::string& out) {
    auto read = base::OptionalString(json, name);
    if (!read.ok()) return false;
    if (*read) out = **read;
    return true;
  };
  auto int_field = [&](const char* name, auto& out) {
    auto read = base::OptionalInt(json, name);
    if (!read.ok()) return false;
    if (!*read) return true;
    const int64_t value = **read;
    if (value < 0 || value > std::numeric_limits<std::remove_reference_t<decltype(out)>>::max()) {
      return false;
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(value);
    return true;
  };
  if (!string_field("provider_operation_id", pending.provider_operation_id) ||
      !string_field("etag", pending.etag) || !string_field("last_status", pending.last_status) ||
      !int_field("expires_at_ms", pending.expires_at_ms) ||
      !int_field("submitted_at_ms", pending.submitted_at_ms) ||
      !int_field("attempts", pending.attempts)) {
    return absl::InvalidArgumentError("pending operation has a field of the wrong type or range");
  }
  // Absent in an operation persisted before the field existed: not dispatched.
  const auto dispatched = base::OptionalBool(json, "dispatched");
  if (!dispatched.ok()) {
    return absl::InvalidArgumentError("pending operation has a field of the wrong type or range");
  }
  pending.dispatched = dispatched->value_or(false);
  if (!pending.provider_operation_id.empty() &&
      !IsValidProviderOperationId(pending.provider_operation_id)) {
    return absl::InvalidArgumentError("pending operation id is invalid");
  }
  if (pending.etag.size() > kMaxEtagBytes ||
      pending.etag.find_first_of("\r\n") != std::string::npos) {
    return absl::InvalidArgumentError("pending operation etag is invalid");
  }
  return pending;
}

TurnDecision RunTurn(ExecutionsTransport& transport, const std::string& idempotency_key,
                     const nlohmann::json& submit_body, const PendingOperation& pending,
                     int64_t now_ms) {
  TurnDecision decision;
  decision.pending = pending;
  if (pending.provider_operation_id.empty()) {
    SubmitTurn(transport, idempotency_key, submit_body, now_ms, decision);
  } else if (!IsValidProviderOperationId(pending.provider_operation_id)) {
    // Never build a path from it, and never submit a replacement either.
    Terminal(decision, kOutcomeReceiptInvalid, "status: persisted operation id invalid");
  } else {
    StatusTurn(transport, decision);
  }
  decision.pending.attempts += decision.exchanges;
  return decision;
}

int64_t BoundedRetryDelayMs(const http::Headers& headers, int64_t default_ms) {
  const std::optional<int64_t> seconds = HeaderInteger(headers, "Retry-After", kMaxRetryDelayMs);
  return seconds ? std::clamp(*seconds * 1000, kMinRetryDelayMs, kMaxRetryDelayMs)
                 : std::clamp(default_ms, kMinRetryDelayMs, kMaxRetryDelayMs);
}

int64_t ProgressPollDelayMs(const http::Headers& headers) {
  int64_t delay = BoundedRetryDelayMs(headers, kDefaultRetryDelayMs);
  if (const auto hint = HeaderInteger(headers, "Retry-After-Ms", kMaxRetryDelayMs)) {
    delay = std::min(delay, *hint);
  }
  return std::max(delay, kMinProgressPollMs);
}

}  // namespace aevatar::orchestrator
