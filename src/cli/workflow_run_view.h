#ifndef AEVATAR_CLI_WORKFLOW_RUN_VIEW_H_
#define AEVATAR_CLI_WORKFLOW_RUN_VIEW_H_

// How `aevatar workflow` shows runs to a person: a run's steps and outcomes,
// one live event, and a listing row. Every read of the server's JSON is a
// typed json_read accessor, so a member of another type prints as absent.

#include <ostream>

#include "nlohmann/json.hpp"

namespace aevatar::cli {

// "run ID (WORKFLOW): STATUS [OUTCOME]" then a block per step.
void PrintRun(std::ostream& out, const nlohmann::json& run);

// "[Ns] TYPE step=… status=… approval=…" for one event of a run's stream,
// `elapsed_s` seconds after the command started.
void PrintRunEvent(std::ostream& out, const nlohmann::json& event, int64_t elapsed_s);

// One line of `aevatar workflow list`: id, workflow, status, outcome, created.
void PrintRunRow(std::ostream& out, const nlohmann::json& run);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_WORKFLOW_RUN_VIEW_H_
