#include "aevatar/runtime/execution_result.h"

#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

bool IsResultStatus(const std::string& status) {
  return status == "succeeded" || status == "failed";
}

// Reads an optional member into `out` (left as is when absent).
template <typename T>
absl::Status ReadOptional(absl::StatusOr<std::optional<T>> read, T& out) {
  if (!read.ok()) return read.status();
  if (*read) out = std::move(**read);
  return absl::OkStatus();
}

}  // namespace

nlohmann::json WorkflowExecutionResult::ToJson() const {
  return {{"status", status},
          {"success", success},
          {"exit_code", exit_code ? nlohmann::json(*exit_code) : nlohmann::json(nullptr)},
          {"stdout", stdout_text},
          {"stderr", stderr_text},
          {"verdict", verdict},
          {"timed_out", timed_out},
          {"stdout_truncated", stdout_truncated},
          {"stderr_truncated", stderr_truncated}};
}

absl::StatusOr<WorkflowExecutionResult> WorkflowExecutionResult::FromJson(
    const nlohmann::json& body, const std::string& last_status) {
  if (!body.is_object()) return absl::InvalidArgumentError("the result is not an object");
  WorkflowExecutionResult result;
  auto success = base::RequiredBool(body, "success");
  if (!success.ok()) return success.status();
  result.success = *success;
  result.status = last_status;
  auto exit_code = base::OptionalInt(body, "exit_code");
  if (!exit_code.ok()) return exit_code.status();
  result.exit_code = *exit_code;
  for (absl::Status st :
       {ReadOptional(base::OptionalString(body, "status"), result.status),
        ReadOptional(base::OptionalString(body, "stdout"), result.stdout_text),
        ReadOptional(base::OptionalString(body, "stderr"), result.stderr_text),
        ReadOptional(base::OptionalString(body, "verdict"), result.verdict),
        ReadOptional(base::OptionalBool(body, "timed_out"), result.timed_out),
        ReadOptional(base::OptionalBool(body, "stdout_truncated"), result.stdout_truncated),
        ReadOptional(base::OptionalBool(body, "stderr_truncated"), result.stderr_truncated)}) {
    if (!st.ok()) return st;
  }
  if (!IsResultStatus(result.status)) {
    return absl::InvalidArgumentError("field 'status' is not succeeded or failed");
  }
  return result;
}

}  // namespace aevatar::orchestrator
