#ifndef AEVATAR_AEVATAR_CLIENTS_EXECUTION_REPLIES_H_
#define AEVATAR_AEVATAR_CLIENTS_EXECUTION_REPLIES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// The executor's reply documents as typed values: where chrono-sandbox's
// bytes, relayed by the NyxID proxy, become something the runtime may act
// on. Nothing past these functions reads the executor's raw JSON.
//
// Every parse is strict about what a decision depends on and never throws:
// a member of the wrong type (a number where a string belongs, an object for
// a flag) is a typed error, never a default, because a defaulted field could
// turn a failed program into a passing step. The error is
//   base::ApiError(kUnavailable, kResponseInvalidCode, <which field>, 502)
// whose detail names the document and field, never a value (the value may be
// program output or a secret).
namespace aevatar::orchestrator {

// The typed outcome of a reply that breaks the executor's contract.
inline constexpr char kResponseInvalidCode[] = "code_execution_response_invalid";

// Returns true for the statuses of the executor's /executions contract:
// queued, running, succeeded, failed, cancelled, outcome_uncertain.
bool IsKnownExecutionStatus(std::string_view status);

// A status document (GET /executions/{id}, the cancel reply):
//   {"operation_id", "status", "expires_at"?, "done"?, "created_at"?, ...}
struct ExecutionStatus {
  std::string status;         // one of the known statuses
  std::string operation_id;   // "" when absent; else ^op_[a-z0-9]{1,64}$
  int64_t expires_at_ms = 0;  // 0 when absent or not an RFC 3339 time (metadata)
};

// Requires "status" (a known status). "operation_id" and "expires_at" are
// optional but, when present, must be strings (an operation id that fails
// the id pattern is invalid too). Unknown members are ignored.
absl::StatusOr<ExecutionStatus> ParseExecutionStatus(const nlohmann::json& body);

// A 202 receipt of POST /executions: the status document plus provider URLs,
// which are ignored. Like ParseExecutionStatus, except that "operation_id" is
// required and "status" is optional ("queued" when absent).
absl::StatusOr<ExecutionStatus> ParseExecutionReceipt(const nlohmann::json& body);

// A program's result: the synchronous POST /execute reply and the durable
// GET /executions/{id}/result document.
struct ExecutionResult {
  bool success = false;
  std::optional<int64_t> exit_code;  // null: the program never ran to an exit
  std::string stdout_text;
  std::string stderr_text;
  bool timed_out = false;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::string verdict;                       // "" when absent
  std::optional<int64_t> execution_time_ms;  // absent for a result without a run
  std::string status;                        // durable result only: a known status, else ""
  std::string operation_id;                  // durable result only, else ""

  // The document again, with exactly the members that were read (absent
  // optional members stay absent). ParseExecutionResult(r.ToJson()) == r.
  nlohmann::json ToJson() const;
  bool operator==(const ExecutionResult&) const = default;
};

// Requires "success" (bool), "stdout" and "stderr" (strings); "exit_code" is
// an integer or null; "timed_out", "stdout_truncated", "stderr_truncated"
// (bools, false when absent), "verdict" (string), "execution_time_ms"
// (non-negative integer), "status" (a known status) and "operation_id" are
// optional but typed when present.
absl::StatusOr<ExecutionResult> ParseExecutionResult(const nlohmann::json& body);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CLIENTS_EXECUTION_REPLIES_H_
