#ifndef AEVATAR_AEVATAR_RUNTIME_EXECUTION_RESULT_H_
#define AEVATAR_AEVATAR_RUNTIME_EXECUTION_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// The workflow's normalized form of the executor's result document
// (GET /executions/{id}/result), read once
// through base/json_read.h so that nothing downstream ever touches the
// provider's raw JSON. A document of the wrong shape is an error here, and
// the workflow turns it into the typed step failure
// code_execution_response_invalid; it never throws and never loops.
namespace aevatar::orchestrator {

struct WorkflowExecutionResult {
  std::string status;                // "succeeded" | "failed"
  bool success = false;              // the executor's own verdict on the run
  std::optional<int64_t> exit_code;  // absent or null when the program never exited
  std::string stdout_text;           // "" when absent
  std::string stderr_text;           // "" when absent
  std::string verdict;               // "" when absent
  bool timed_out = false;
  bool stdout_truncated = false;
  bool stderr_truncated = false;

  // {status, success, exit_code (null when unknown), stdout, stderr, verdict,
  //  timed_out, stdout_truncated, stderr_truncated}: the normalized form the
  // workflow keeps and evaluates.
  nlohmann::json ToJson() const;

  // Reads `body`. It must be an object; `success` is a required boolean;
  // `status`, when present, must be "succeeded" or "failed" (absent: the
  // status the caller last saw, `last_status`, which must itself be one of
  // the two); stdout, stderr and verdict are optional strings, exit_code an
  // optional integer, the flags optional booleans. Any member present with
  // another type is InvalidArgument naming the field, never its value.
  static absl::StatusOr<WorkflowExecutionResult> FromJson(const nlohmann::json& body,
                                                          const std::string& last_status);
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_EXECUTION_RESULT_H_
