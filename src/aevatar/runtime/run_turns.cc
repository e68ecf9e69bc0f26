#include "aevatar/runtime/run_turns.h"

#include <algorithm>

#include "aevatar/runtime/turn.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {

using nlohmann::json;

absl::StatusOr<json> LoadPendingMaterial(const TurnDeps& deps, const json& pending) {
  auto sealed = deps.store->GetSealed(base::StringOr(pending, "material_ref", ""));
  if (!sealed.ok()) return sealed.status();
  auto material = OpenSealedJson(*deps.vault, *sealed, "protected material");
  if (!material.ok()) return material.status();
  if ("sha256:" + base::Sha256Hex(material->dump()) !=
      base::StringOr(pending, "material_digest", "")) {
    return absl::DataLossError("the protected material does not match its digest");
  }
  return material;
}

bool IsTerminalPhase(const std::string& phase) {
  return phase == "succeeded" || phase == "failed" || phase == "stopped";
}

int64_t BackoffMs(int attempt) {
  int64_t delay = 1000;
  for (int i = 1; i < attempt && delay < 30'000; ++i) delay *= 2;
  return std::min<int64_t>(delay, 30'000);
}

absl::Status ExecuteTurn(const TurnDeps& deps, const Callback& callback,
                         std::optional<RunRecord> preloaded) {
  if (!preloaded) {
    auto run = deps.store->GetRun(callback.run_id);
    if (!run.ok()) return run.status();
    preloaded = *std::move(run);
  }
  if (IsTerminalPhase(preloaded->phase) ||
      preloaded->state.value("callback_id", "") != callback.callback_id) {
    return absl::OkStatus();  // a stale delivery: the actor moved on
  }
  Turn turn;
  turn.run = *std::move(preloaded);
  if (turn.run.phase == "finalizing_audit") return AuditStep(deps, turn);
  auto definition = LoadDefinition(deps, turn.state());
  if (!definition.ok()) return definition.status();
  const WorkflowDefinition& loaded = **definition;
  if (turn.state()["stop"].is_object()) return StopStep(deps, turn, loaded);
  if (!turn.state()["pending"].is_object()) return StartStep(deps, turn, loaded);
  return ProgressStep(deps, turn, loaded);
}

}  // namespace aevatar::orchestrator
