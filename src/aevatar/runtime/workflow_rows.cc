#include "aevatar/runtime/workflow_rows.h"

#include "base/api_error.h"

namespace aevatar::orchestrator {

nlohmann::json ParseStoredJson(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? nlohmann::json(nullptr) : value;
}

absl::Status WorkflowNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "WORKFLOW_NOT_FOUND",
                        "no such workflow for this caller");
}

absl::Status RunNotFound() {
  return base::ApiError(absl::StatusCode::kNotFound, "RUN_NOT_FOUND",
                        "no such workflow run for this caller");
}

absl::Status SealedMaterialMissing() {
  return base::ApiError(absl::StatusCode::kNotFound, "SEALED_MATERIAL_MISSING",
                        "the protected material is missing");
}

absl::Status RunChangedSinceLoaded() {
  return absl::AbortedError("the run changed since it was loaded");
}

}  // namespace aevatar::orchestrator
