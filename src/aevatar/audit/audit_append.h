#ifndef AEVATAR_AEVATAR_AUDIT_AUDIT_APPEND_H_
#define AEVATAR_AEVATAR_AUDIT_AUDIT_APPEND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aevatar/audit/audit_log.h"
#include "aevatar/audit/audit_record.h"
#include "nlohmann/json.hpp"

// What every AuditLog backend (SQLite, PostgreSQL) does around its SQL: the
// record made ready to store, the outcome of a taken slot, the conflict's
// log line, and a stored fact read back.
namespace aevatar::orchestrator {

// The columns every backend inserts and selects, in this order.
inline constexpr char kAuditColumns[] =
    "record_id, kind, run_id, workflow_id, step_id, call_id, request_id, approval_id, "
    "correlation_id, causation_id, fact, trace_id, span_id, traceparent, tracestate, "
    "occurred_at_ms, recorded_at_ms, content_hash";

// Validates `record` (ValidateAuditRecord: InvalidArgument) and sets what
// Append sets: record_id when empty, recorded_at_ms (now) and content_hash
// (computed here, never trusted from the caller).
absl::Status PrepareForAppend(AuditRecord& record);

// The outcome for `record` when its slot already holds a record whose
// persisted hash is `stored_hash`: kDuplicate when equal, kConflict (and
// the conflict is logged, ids and hashes only) otherwise.
AppendOutcome OccupiedSlotOutcome(const AuditRecord& record, const std::string& stored_hash);

// A stored fact's text as JSON; DataLoss naming the record (never the
// content) when it does not parse.
absl::StatusOr<nlohmann::json> ParseStoredFact(const std::string& text,
                                               const std::string& record_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_AUDIT_AUDIT_APPEND_H_
