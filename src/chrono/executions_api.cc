// The durable execution routes: POST /executions and the status, result and
// cancel routes of one operation.
#include <cstdint>
#include <limits>
#include <optional>

#include "base/api_error.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "chrono/api_support.h"
#include "chrono/etag.h"
#include "chrono/execute_request.h"

namespace aevatar::chrono {
namespace {

using base::ApiError;

std::string ExecutionPath(const std::string& id) { return "/executions/" + id; }

}  // namespace

nlohmann::json StatusDocument(const Operation& op) {
  nlohmann::json doc = {
      {"operation_id", op.id},
      {"status", OperationStatusName(op.status)},
      {"created_at", base::FormatUtcMillis(op.created_at_ms)},
      {"expires_at", base::FormatUtcMillis(op.expires_at_ms)},
      {"done", IsTerminal(op.status)},
  };
  if (op.started_at_ms > 0) doc["started_at"] = base::FormatUtcMillis(op.started_at_ms);
  if (op.finished_at_ms > 0) doc["finished_at"] = base::FormatUtcMillis(op.finished_at_ms);
  return doc;
}

namespace {

// When to poll an active operation again: Retry-After, and Retry-After-Ms
// when the executor expects it to end within a second.
void SetPollHint(const ApiContext& ctx, const Operation& op, http::Response& response) {
  const Executor::PollHint hint = ctx.deps.executor->PollAfter(op);
  response.headers.Set("Retry-After", std::to_string(hint.secs));
  if (hint.ms) response.headers.Set("Retry-After-Ms", std::to_string(*hint.ms));
}

// The status document with its ETag (and Retry-After while active), or 304.
http::Response StatusResponse(const ApiContext& ctx, const Operation& op,
                              const http::Request& request) {
  const std::string body = StatusDocument(op).dump();
  const std::string etag = StrongETag(body);
  http::Response response;
  if (auto inm = request.headers.Get("If-None-Match"); inm && IfNoneMatchHits(*inm, etag)) {
    response.status = 304;
  } else {
    response = http::JsonResponse(200, body);
  }
  response.headers.Set("ETag", etag);
  if (!IsTerminal(op.status)) SetPollHint(ctx, op, response);
  return response;
}

// Loads the caller's operation; others' and unknown ones are the same 404.
absl::StatusOr<Operation> LoadOwned(const ApiContext& ctx, const http::Request& request,
                                    const std::string& owner) {
  auto op = ctx.deps.store->Get(request.path_params.at("id"));
  if (absl::IsNotFound(op.status()) || (op.ok() && op->owner != owner)) {
    return ApiError(absl::StatusCode::kNotFound, "OPERATION_NOT_FOUND",
                    "no such operation for this caller");
  }
  if (!op.ok()) return op.status();
  // Expiry is decided at read time too, so a result is never served past
  // retention while waiting for the next sweep.
  if (op->expired || (IsTerminal(op->status) && op->expires_at_ms <= ctx.deps.now())) {
    return ApiError(absl::StatusCode::kNotFound, "OPERATION_EXPIRED",
                    "the operation's retention has ended", 410);
  }
  return op;
}

// The caller's absolute cancellation deadline from the cancel body, if it
// sent one. InvalidArgument (typed) for a body that is not an object or a
// deadline that is not an integer.
absl::StatusOr<std::optional<int64_t>> CancelDeadline(const std::string& body_text) {
  if (body_text.empty()) return std::nullopt;
  nlohmann::json body = nlohmann::json::parse(body_text, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return ApiError(absl::StatusCode::kInvalidArgument, "MALFORMED_JSON",
                    "the body must be a JSON object");
  }
  auto deadline = body.find("deadline_unix_ms");
  if (deadline == body.end() || deadline->is_null()) return std::nullopt;
  if (!deadline->is_number_integer() ||
      (deadline->is_number_unsigned() &&
       deadline->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
    return ApiError(absl::StatusCode::kInvalidArgument, "INVALID_FIELD_TYPE",
                    "field 'deadline_unix_ms' must be an integer");
  }
  return deadline->get<int64_t>();
}

}  // namespace

http::Response HandleSubmit(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  // The key is checked before the body is even parsed: a probe with an empty
  // body and no key must get exactly this, and nothing is stored.
  auto key = request.headers.Get("Idempotency-Key");
  if (!key || key->empty()) {
    return Problem(ApiError(absl::StatusCode::kInvalidArgument, "IDEMPOTENCY_KEY_MISSING",
                            "the Idempotency-Key header is required"),
                   note);
  }
  if (key->size() > kMaxIdempotencyKeyLength) {
    return Problem(ApiError(absl::StatusCode::kInvalidArgument, "IDEMPOTENCY_KEY_INVALID",
                            "the Idempotency-Key header is longer than 255 characters"),
                   note);
  }
  if (!ctx.options.async_enabled) {
    return Problem(ApiError(absl::StatusCode::kUnavailable, "ASYNC_EXECUTION_UNAVAILABLE",
                            "durable execution is disabled on this executor", 503),
                   note);
  }
  auto parsed = ParseExecuteRequest(request.body, DeclaredRuntimes(ctx));
  if (!parsed.ok()) return Problem(parsed.status(), note);

  const int64_t now = ctx.deps.now();
  Operation op;
  op.id = base::RandomId("op_");
  op.owner = caller->owner;
  op.idempotency_key_hash = base::Sha256Hex(*key);
  op.request = CanonicalRequestJson(*parsed);
  op.fingerprint = base::Sha256Hex(op.request);
  op.sealed_credentials = ctx.deps.sealer->Seal(ServerEnvFor(*caller, ctx.options.nyxid_base_url));
  op.created_at_ms = now;
  op.expires_at_ms = now + ctx.options.retention_ms;

  auto outcome = ctx.deps.executor->Submit(op);
  if (!outcome.ok()) {
    http::Response response = Problem(outcome.status(), note);
    if (response.status == 429) response.headers.Set("Retry-After", "1");
    return response;
  }
  const Operation& stored = outcome->operation;
  note.operation_id = stored.id;
  if (!outcome->created && stored.fingerprint != op.fingerprint) {
    note.operation_id.clear();  // not this caller's payload: do not tie the key to it in logs
    return Problem(ApiError(absl::StatusCode::kAlreadyExists, "IDEMPOTENCY_KEY_REUSE",
                            "this Idempotency-Key was used with a different request"),
                   note);
  }
  if (stored.expired) {
    return Problem(ApiError(absl::StatusCode::kNotFound, "OPERATION_EXPIRED",
                            "the operation for this key has expired", 410),
                   note);
  }
  const std::string path = ExecutionPath(stored.id);
  nlohmann::json receipt = StatusDocument(stored);
  receipt["status_url"] = path;
  receipt["result_url"] = path + "/result";
  receipt["cancel_url"] = path + "/cancel";
  http::Response response = Json(202, receipt);
  response.headers.Set("Location", path);
  response.headers.Set("ETag", StrongETag(StatusDocument(stored).dump()));
  SetPollHint(ctx, stored, response);
  return response;
}

http::Response HandleStatus(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto op = LoadOwned(ctx, request, caller->owner);
  if (!op.ok()) return Problem(op.status(), note);
  note.operation_id = op->id;
  return StatusResponse(ctx, *op, request);
}

http::Response HandleResult(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto op = LoadOwned(ctx, request, caller->owner);
  if (!op.ok()) return Problem(op.status(), note);
  note.operation_id = op->id;
  if (!IsTerminal(op->status)) {
    http::Response response =
        Problem(ApiError(absl::StatusCode::kFailedPrecondition, "OPERATION_NOT_TERMINAL",
                         "the operation has not finished; poll its status"),
                note);
    SetPollHint(ctx, *op, response);
    return response;
  }
  nlohmann::json result = nlohmann::json::parse(op->result, nullptr, false);
  if (!result.is_object()) {
    // outcome_uncertain (or cancelled before it ran): no output exists.
    result = {{"success", false},
              {"exit_code", nullptr},
              {"stdout", ""},
              {"stderr", ""},
              {"timed_out", false},
              {"stdout_truncated", false},
              {"stderr_truncated", false}};
  }
  result["operation_id"] = op->id;
  result["status"] = OperationStatusName(op->status);
  return Json(200, result);
}

http::Response HandleCancel(const ApiContext& ctx, http::Request& request, RequestNote& note) {
  auto caller = ctx.deps.auth->Authenticate(request, {kExecuteScope});
  if (!caller.ok()) return Problem(caller.status(), note);
  auto deadline = CancelDeadline(request.body);
  if (!deadline.ok()) return Problem(deadline.status(), note);
  auto op = LoadOwned(ctx, request, caller->owner);
  if (!op.ok()) return Problem(op.status(), note);
  note.operation_id = op->id;
  // The caller settles a cancellation that outlives its deadline on its own
  // (code_execution_cancel_outcome_uncertain), and past the deadline no new
  // provider operation may start. So a late cancel changes nothing: a queued
  // operation stays queued, a running one keeps running, and the caller gets
  // a definitive 409 rather than a status it could mistake for the cancel's
  // outcome. Checked last, right before the cancel would be acted on.
  if (*deadline && ctx.deps.now() >= **deadline) {
    return Problem(ApiError(absl::StatusCode::kFailedPrecondition, "CANCEL_DEADLINE_EXCEEDED",
                            "the cancellation arrived at or after its deadline_unix_ms; "
                            "nothing was changed"),
                   note);
  }
  auto cancelled = ctx.deps.executor->Cancel(op->id);
  if (!cancelled.ok()) return Problem(cancelled.status(), note);
  return StatusResponse(ctx, *cancelled, request);
}

}  // namespace aevatar::chrono
