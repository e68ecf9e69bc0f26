#include "chrono/operation_transitions.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace aevatar::chrono {

absl::Status ValidateFresh(const Operation& op) {
  if (op.id.empty() || op.owner.empty() || op.idempotency_key_hash.empty()) {
    return absl::InvalidArgumentError("new operation needs an id, an owner and a key hash");
  }
  if (op.status != OperationStatus::kQueued || op.version != 1 || op.started_at_ms != 0 ||
      op.finished_at_ms != 0 || op.cancel_requested || !op.result.empty() ||
      !op.claimed_by.empty() || op.expired || op.lease_expires_at_ms != 0) {
    return absl::InvalidArgumentError("new operation must be a fresh queued one");
  }
  return absl::OkStatus();
}

absl::Status ValidateFinishStatus(OperationStatus status) {
  if (IsTerminal(status)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Finish to non-terminal status ", std::string(OperationStatusName(status))));
}

void EnterTerminal(Operation& op, OperationStatus status, int64_t now_ms) {
  op.status = status;
  op.finished_at_ms = now_ms;
  op.request.clear();
  op.sealed_credentials.clear();
  op.lease_expires_at_ms = 0;
  ++op.version;
}

void ApplyClaim(Operation& op, const std::string& runner_id, int64_t now_ms, int64_t lease_ms) {
  op.status = OperationStatus::kRunning;
  op.started_at_ms = now_ms;
  op.claimed_by = runner_id;
  op.lease_expires_at_ms = LeaseEnd(now_ms, lease_ms);
  ++op.version;
}

absl::Status ValidateLease(const std::string& runner_id, int64_t lease_ms) {
  if (runner_id.empty()) return absl::InvalidArgumentError("a lease needs a runner id");
  if (lease_ms <= 0) return absl::InvalidArgumentError("a lease needs a positive length");
  return absl::OkStatus();
}

int64_t LeaseEnd(int64_t now_ms, int64_t lease_ms) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  return now_ms > kMax - lease_ms ? kMax : now_ms + lease_ms;
}

absl::Status ApplyFinish(Operation& op, OperationStatus status, const std::string& result,
                         int64_t now_ms) {
  if (op.status != OperationStatus::kRunning) {
    return absl::FailedPreconditionError(absl::StrCat(
        "operation ", op.id, " is ", std::string(OperationStatusName(op.status)), ", not running"));
  }
  EnterTerminal(op, status, now_ms);
  op.result = result;
  return absl::OkStatus();
}

bool ApplyCancel(Operation& op, int64_t now_ms) {
  if (op.status == OperationStatus::kQueued) {
    EnterTerminal(op, OperationStatus::kCancelled, now_ms);
    return true;
  }
  if (op.status == OperationStatus::kRunning && !op.cancel_requested) {
    op.cancel_requested = true;
    return true;
  }
  return false;  // already requested, or terminal: unchanged
}

int64_t TombstoneCutoff(int64_t now_ms, int64_t keep_ms) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  return now_ms < kMin + keep_ms ? kMin : now_ms - keep_ms;
}

absl::Status ToStoreError(absl::Status s) {
  switch (s.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnavailable:
      return s;
    default:
      return absl::InternalError(std::string(s.message()));
  }
}

}  // namespace aevatar::chrono
