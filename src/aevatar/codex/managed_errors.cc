#include "aevatar/codex/managed_errors.h"

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "base/problem_json.h"

namespace aevatar::orchestrator {
namespace {

struct CodeInfo {
  const char* code;
  absl::StatusCode status;
  int http;
};

constexpr CodeInfo kCodes[] = {
    {kTargetNotConfigured, absl::StatusCode::kUnimplemented, 501},
    {kManagedTargetDisabled, absl::StatusCode::kFailedPrecondition, 409},
    {kManagedFeatureNotEnabled, absl::StatusCode::kPermissionDenied, 403},
    {kManagedUserServicesUnavailable, absl::StatusCode::kFailedPrecondition, 409},
    {kManagedCredentialUnavailable, absl::StatusCode::kFailedPrecondition, 409},
    {kManagedProxyAuthorizationDenied, absl::StatusCode::kPermissionDenied, 403},
    {kManagedProxyTargetUnavailable, absl::StatusCode::kUnavailable, 502},
    {kManagedProxyTimeout, absl::StatusCode::kDeadlineExceeded, 504},
    {kManagedProxyUnavailable, absl::StatusCode::kUnavailable, 503},
    {kManagedResponseInvalid, absl::StatusCode::kUnavailable, 502},
    {kManagedResponseTooLarge, absl::StatusCode::kUnavailable, 502},
    {kManagedExecutionNonzeroExit, absl::StatusCode::kFailedPrecondition, 422},
    {kManagedBudgetExhausted, absl::StatusCode::kDeadlineExceeded, 504},
    {kManagedExecutionCancelled, absl::StatusCode::kAborted, 409},
};

bool IsDiagnosticToken(const std::string& id) {
  if (id.size() < 6 || id.size() > 69 || id.rfind("diag_", 0) != 0) return false;
  return id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
         std::string::npos;
}

absl::Status Invalid(std::string detail) {
  return ManagedError(kManagedResponseInvalid, "chrono-sandbox's reply " + std::move(detail));
}

// "HTTP 503 CODEX_RUNNER_BUSY": the status and the peer's code when it is a plain token.
std::string Upstream(const NyxidReply& reply) {
  std::string text = absl::StrCat("HTTP ", reply.status);
  if (std::string code = base::ProblemCodeOf(reply.body); !code.empty()) {
    absl::StrAppend(&text, " ", code);
  }
  return text;
}

}  // namespace

absl::Status ManagedError(std::string_view code, std::string detail) {
  for (const CodeInfo& info : kCodes) {
    if (code == info.code)
      return base::ApiError(info.status, info.code, std::move(detail), info.http);
  }
  return base::ApiError(absl::StatusCode::kInternal, std::string(code), std::move(detail), 500);
}

nlohmann::json ManagedCodexResult::ToJson() const {
  nlohmann::json out = {{"status", status},
                        {"target", target},
                        {"output", output},
                        {"exit_code", exit_code},
                        {"diagnostic_id", diagnostic_id}};
  if (elapsed_ms) out["elapsed_ms"] = *elapsed_ms;
  return out;
}

absl::StatusOr<ManagedCodexResult> ParseManagedCodexResult(std::string_view body) {
  if (body.size() >= kMaxManagedResponseBytes) {
    return ManagedError(kManagedResponseTooLarge, "chrono-sandbox's reply exceeds 128 KiB");
  }
  auto root = base::ParseJsonObject(body, /*max_depth=*/8);
  if (!root.ok()) return Invalid("is not a JSON object");
  ManagedCodexResult result;
  auto status = base::RequiredString(*root, "status");
  if (!status.ok()) return Invalid("lacks a string 'status'");
  if (*status != "succeeded" && *status != "failed" && *status != "timed_out" &&
      *status != "cancelled") {
    return Invalid("has an unknown 'status'");
  }
  result.status = *status;
  auto target = base::RequiredString(*root, "target");
  if (!target.ok() || *target != "managed_sandbox") {
    return Invalid("lacks 'target' = \"managed_sandbox\"");
  }
  result.target = *target;
  auto output = base::RequiredString(*root, "output");
  if (!output.ok()) return Invalid("lacks a string 'output'");
  if (output->size() > kMaxManagedOutputBytes) {
    return ManagedError(kManagedResponseTooLarge, "chrono-sandbox's output exceeds 64 KiB");
  }
  result.output = *std::move(output);
  auto exit_code = base::RequiredInt(*root, "exit_code");
  if (!exit_code.ok()) return Invalid("lacks an integer 'exit_code'");
  result.exit_code = *exit_code;
  auto diagnostic = base::RequiredString(*root, "diagnostic_id");
  if (!diagnostic.ok() || !IsDiagnosticToken(*diagnostic)) {
    return Invalid("lacks a sanitized 'diagnostic_id'");
  }
  result.diagnostic_id = *diagnostic;
  auto elapsed = base::OptionalInt(*root, "elapsed_ms");
  if (!elapsed.ok()) return Invalid("has a non-integer 'elapsed_ms'");
  result.elapsed_ms = *elapsed;
  if (result.status == "succeeded" && result.exit_code != 0) {
    return Invalid("says succeeded with a non-zero 'exit_code'");
  }
  return result;
}

absl::StatusOr<ManagedCodexResult> ClassifyManagedReply(const NyxidReply& reply) {
  if (reply.status == 0) {
    switch (reply.transport) {
      case absl::StatusCode::kDeadlineExceeded:
        return ManagedError(kManagedProxyTimeout,
                            "the NyxID proxy / chrono-sandbox request passed its deadline");
      case absl::StatusCode::kResourceExhausted:
        return ManagedError(kManagedResponseTooLarge, "chrono-sandbox's reply exceeds 128 KiB");
      default:
        return ManagedError(kManagedProxyUnavailable, "NyxID's proxy could not be reached");
    }
  }
  const int s = reply.status;
  if (s == 200) return ParseManagedCodexResult(reply.raw_body);
  const std::string upstream = Upstream(reply);
  if (s == 504 || s == 408) {
    return ManagedError(kManagedProxyTimeout, "the proxy request timed out: " + upstream);
  }
  if (s == 401 || s == 403) {
    return ManagedError(kManagedProxyAuthorizationDenied,
                        "NyxID or chrono-sandbox denied the exact proxy request: " + upstream);
  }
  if (s == 429 || s >= 500) {
    if (s == 501) {
      return ManagedError(kManagedProxyTargetUnavailable,
                          "the /codex/execute route is unavailable: " + upstream);
    }
    return ManagedError(kManagedProxyUnavailable,
                        "the proxy or chrono-sandbox is unavailable or at capacity: " + upstream);
  }
  if (s >= 400) {
    return ManagedError(kManagedProxyTargetUnavailable,
                        "the chrono-sandbox route or /codex/execute is unavailable: " + upstream);
  }
  return ManagedError(kManagedResponseInvalid,
                      "chrono-sandbox answered an unexpected status: " + upstream);
}

absl::Status ManagedOutcome(const ManagedCodexResult& result) {
  if (result.status == "succeeded") return absl::OkStatus();
  if (result.status == "cancelled") {
    return ManagedError(kManagedExecutionCancelled,
                        "the run was cancelled and chrono-sandbox killed its sandbox");
  }
  return ManagedError(
      kManagedExecutionNonzeroExit,
      absl::StrCat("the Codex runner ended ", result.status, " with exit code ", result.exit_code));
}

}  // namespace aevatar::orchestrator
