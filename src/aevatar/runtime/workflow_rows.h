#ifndef AEVATAR_AEVATAR_RUNTIME_WORKFLOW_ROWS_H_
#define AEVATAR_AEVATAR_RUNTIME_WORKFLOW_ROWS_H_

#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

// What every WorkflowStore backend (SQLite, PostgreSQL) shares beyond its
// SQL: stored JSON read back, and the typed errors of a missing row.
namespace aevatar::orchestrator {

// The phases of a finished run, as an SQL list: "('succeeded', …)".
inline constexpr char kTerminalPhasesSql[] = "('succeeded', 'failed', 'stopped')";

// Stored JSON text as JSON, or null for text that does not parse (or an
// absent optional row).
nlohmann::json ParseStoredJson(const std::string& text);

// 404 WORKFLOW_NOT_FOUND, RUN_NOT_FOUND and SEALED_MATERIAL_MISSING.
absl::Status WorkflowNotFound();
absl::Status RunNotFound();
absl::Status SealedMaterialMissing();

// Aborted: the run's version moved since the turn loaded it (another turn,
// or another replica, committed first).
absl::Status RunChangedSinceLoaded();

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_WORKFLOW_ROWS_H_
