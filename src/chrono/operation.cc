#include "chrono/operation.h"

namespace aevatar::chrono {

std::string_view OperationStatusName(OperationStatus status) {
  switch (status) {
    case OperationStatus::kQueued:
      return "queued";
    case OperationStatus::kRunning:
      return "running";
    case OperationStatus::kSucceeded:
      return "succeeded";
    case OperationStatus::kFailed:
      return "failed";
    case OperationStatus::kCancelled:
      return "cancelled";
    case OperationStatus::kOutcomeUncertain:
      return "outcome_uncertain";
  }
  return "unknown";
}

std::optional<OperationStatus> ParseOperationStatus(std::string_view name) {
  for (OperationStatus status : {OperationStatus::kQueued, OperationStatus::kRunning,
                                 OperationStatus::kSucceeded, OperationStatus::kFailed,
                                 OperationStatus::kCancelled, OperationStatus::kOutcomeUncertain}) {
    if (OperationStatusName(status) == name) return status;
  }
  return std::nullopt;
}

bool IsTerminal(OperationStatus status) {
  return status != OperationStatus::kQueued && status != OperationStatus::kRunning;
}

}  // namespace aevatar::chrono
