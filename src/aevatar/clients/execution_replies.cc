#include "aevatar/clients/execution_replies.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "aevatar/clients/executions_transport.h"
#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// `read` is json_read's message, which names the field and never the value.
absl::Status Invalid(std::string_view document, std::string_view read) {
  return base::ApiError(absl::StatusCode::kUnavailable, kResponseInvalidCode,
                        absl::StrCat("the executor's ", std::string(document),
                                     " reply is invalid: ", std::string(read)),
                        502);
}
absl::Status Invalid(std::string_view document, const absl::Status& read) {
  return Invalid(document, std::string(read.message()));
}

// An RFC 3339 time as Unix ms; 0 when it does not parse (metadata only).
int64_t TimestampMs(const std::string& text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) return 0;
  return absl::ToUnixMillis(time);
}

// The members shared by status documents and receipts, after "status".
absl::Status ReadStatusMembers(std::string_view document, const json& body,
                               bool operation_id_required, ExecutionStatus& out) {
  auto operation_id = base::OptionalString(body, "operation_id");
  if (!operation_id.ok()) return Invalid(document, operation_id.status());
  if (operation_id->has_value()) {
    if (!IsValidProviderOperationId(**operation_id)) {
      return Invalid(document, "field 'operation_id' is not an operation id");
    }
    out.operation_id = **operation_id;
  } else if (operation_id_required) {
    return Invalid(document, "field 'operation_id' (a string) is missing");
  }
  auto expires_at = base::OptionalString(body, "expires_at");
  if (!expires_at.ok()) return Invalid(document, expires_at.status());
  if (expires_at->has_value()) out.expires_at_ms = TimestampMs(**expires_at);
  return absl::OkStatus();
}

absl::StatusOr<std::string> KnownStatus(std::string_view document, const json& body,
                                        bool required) {
  auto status = base::OptionalString(body, "status");
  if (!status.ok()) return Invalid(document, status.status());
  if (!status->has_value()) {
    if (required) return Invalid(document, "field 'status' (a string) is missing");
    return std::string();
  }
  if (!IsKnownExecutionStatus(**status)) {
    return Invalid(document, "field 'status' is not a known status");
  }
  return **status;
}

}  // namespace

bool IsKnownExecutionStatus(std::string_view status) {
  return status == "queued" || status == "running" || status == "succeeded" || status == "failed" ||
         status == "cancelled" || status == "outcome_uncertain";
}

absl::StatusOr<ExecutionStatus> ParseExecutionStatus(const json& body) {
  constexpr char kDocument[] = "status";
  if (!body.is_object()) return Invalid(kDocument, "the document is not an object");
  ExecutionStatus out;
  auto status = KnownStatus(kDocument, body, /*required=*/true);
  if (!status.ok()) return status.status();
  out.status = *std::move(status);
  if (absl::Status st = ReadStatusMembers(kDocument, body, /*operation_id_required=*/false, out);
      !st.ok()) {
    return st;
  }
  return out;
}

absl::StatusOr<ExecutionStatus> ParseExecutionReceipt(const json& body) {
  constexpr char kDocument[] = "receipt";
  if (!body.is_object()) return Invalid(kDocument, "the document is not an object");
  ExecutionStatus out;
  auto status = KnownStatus(kDocument, body, /*required=*/false);
  if (!status.ok()) return status.status();
  out.status = status->empty() ? "queued" : *std::move(status);
  if (absl::Status st = ReadStatusMembers(kDocument, body, /*operation_id_required=*/true, out);
      !st.ok()) {
    return st;
  }
  return out;
}

absl::StatusOr<ExecutionResult> ParseExecutionResult(const json& body) {
  constexpr char kDocument[] = "result";
  if (!body.is_object()) return Invalid(kDocument, "the document is not an object");
  ExecutionResult out;
  auto success = base::RequiredBool(body, "success");
  auto stdout_text = base::RequiredString(body, "stdout");
  auto stderr_text = base::RequiredString(body, "stderr");
  auto exit_code = base::OptionalInt(body, "exit_code");
  auto timed_out = base::OptionalBool(body, "timed_out");
  auto stdout_truncated = base::OptionalBool(body, "stdout_truncated");
  auto stderr_truncated = base::OptionalBool(body, "stderr_truncated");
  auto verdict = base::OptionalString(body, "verdict");
  auto execution_time_ms = base::OptionalInt(body, "execution_time_ms");
  auto operation_id = base::OptionalString(body, "operation_id");
  for (const absl::Status& st :
       {success.status(), stdout_text.status(), stderr_text.status(), exit_code.status(),
        timed_out.status(), stdout_truncated.status(), stderr_truncated.status(), verdict.status(),
        execution_time_ms.status(), operation_id.status()}) {
    if (!st.ok()) return Invalid(kDocument, st);
  }
  if (execution_time_ms->value_or(0) < 0) {
    return Invalid(kDocument, "field 'execution_time_ms' is negative");
  }
  if (operation_id->has_value() && !IsValidProviderOperationId(**operation_id)) {
    return Invalid(kDocument, "field 'operation_id' is not an operation id");
  }
  auto status = KnownStatus(kDocument, body, /*required=*/false);
  if (!status.ok()) return status.status();
  out.success = *success;
  out.stdout_text = *std::move(stdout_text);
  out.stderr_text = *std::move(stderr_text);
  out.exit_code = *exit_code;
  out.timed_out = timed_out->value_or(false);
  out.stdout_truncated = stdout_truncated->value_or(false);
  out.stderr_truncated = stderr_truncated->value_or(false);
  out.verdict = verdict->value_or("");
  out.execution_time_ms = *execution_time_ms;
  out.status = *std::move(status);
  out.operation_id = operation_id->value_or("");
  return out;
}

json ExecutionResult::ToJson() const {
  json out = {{"success", success},
              {"exit_code", exit_code ? json(*exit_code) : json(nullptr)},
              {"stdout", stdout_text},
              {"stderr", stderr_text},
              {"timed_out", timed_out},
              {"stdout_truncated", stdout_truncated},
              {"stderr_truncated", stderr_truncated}};
  if (!verdict.empty()) out["verdict"] = verdict;
  if (execution_time_ms) out["execution_time_ms"] = *execution_time_ms;
  if (!status.empty()) out["status"] = status;
  if (!operation_id.empty()) out["operation_id"] = operation_id;
  return out;
}

}  // namespace aevatar::orchestrator
