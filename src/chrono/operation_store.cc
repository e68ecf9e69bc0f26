#include "chrono/operation_store.h"

#include <string>

#include "base/log.h"

namespace aevatar::chrono {

absl::StatusOr<std::optional<Operation>> OperationStore::FinishAndClaimNext(
    const std::string& id, OperationStatus status, const std::string& result,
    const std::string& runner_id, int64_t now_ms, int64_t lease_ms) {
  absl::StatusOr<Operation> finished = Finish(id, status, result, now_ms);
  if (!finished.ok()) return finished.status();
  absl::StatusOr<std::optional<Operation>> next = ClaimNext(runner_id, now_ms, lease_ms);
  if (!next.ok()) {
    // Finished; the worker claims again after its idle poll.
    base::Log(base::LogLevel::kError, "operations.claim_failed", "",
              {{"error", std::string(next.status().message())}});
    return std::nullopt;
  }
  return next;
}

}  // namespace aevatar::chrono
