#ifndef AEVATAR_AEVATAR_AUDIT_AUDIT_RECORD_H_
#define AEVATAR_AEVATAR_AUDIT_AUDIT_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// Theory of operation: semantic audit identity.
//
// An audit record states one durable business fact about a run ("tool call X
// of step S reached terminal outcome O"). Delivery may repeat: an actor
// activation or a redelivered callback replays the same frozen audit intent,
// each time with fresh tracing and fresh timestamps. The log must treat such a
// replay as the same record, yet must notice when a replay says something
// different about the same thing.
//
//   slot      SemanticKey = (run_id, step_id, call_id, kind). A slot holds at
//             most one record, ever.
//   identity  ContentHash = sha256 over a canonical JSON of every business
//             field: kind, the run/workflow/step/call ids, the request,
//             approval, correlation and causation ids, and the fact.
//   excluded  trace (trace_id, span_id, traceparent, tracestate),
//             occurred_at_ms, recorded_at_ms, record_id and content_hash
//             itself: they describe one delivery, not the fact.
//
// Same slot + same hash is a duplicate (nothing written); same slot + a
// different hash is a conflict (reported, nothing written). The hash is
// persisted with the row and its algorithm is frozen: a rolling upgrade must
// compare old and new rows with the same function, so any change is a new
// prefix ("sha256v2:"), never an edit of this one.

// Delivery tracing for one append (W3C trace context). Never part of the
// semantic identity.
struct AuditTrace {
  std::string trace_id;
  std::string span_id;
  std::string traceparent;
  std::string tracestate;
};

struct AuditRecord {
  std::string record_id;  // assigned by Append when empty ("aud_…" via base::RandomId)
  std::string kind;       // e.g. "tool.running", "tool.terminal", "workflow.stop"; required
  std::string run_id;     // required
  std::string workflow_id;
  std::string step_id;  // "" for run-level records (e.g. workflow.stop)
  std::string call_id;  // the tool call identity; "" for records not about one call
  std::string request_id;
  std::string approval_id;
  std::string correlation_id;
  std::string causation_id;
  nlohmann::json fact;         // the business fact (outcome, status, codes…); never secrets
  AuditTrace trace;            // delivery tracing: NOT part of semantic identity
  int64_t occurred_at_ms = 0;  // NOT part of semantic identity
  int64_t recorded_at_ms = 0;  // set by Append; NOT part of semantic identity
  std::string content_hash;    // set by Append: ContentHash(*this)
};

// Returns "sha256:<64 lowercase hex>" over the canonical JSON of the business
// fields (see the theory block): an object whose keys are sorted, with no
// whitespace, so it is stable across the key order of `fact` and ignores
// tracing and timestamps. Numbers compare by their JSON text (1 and 1.0
// differ). Invalid UTF-8 in a string is replaced by U+FFFD before hashing;
// Append rejects such records (ValidateAuditRecord), so stored hashes never
// depend on that replacement. Thread-safe; pure.
std::string ContentHash(const AuditRecord& record);

// Returns the slot `record` occupies: an unambiguous encoding (a JSON array)
// of (run_id, step_id, call_id, kind). Two records have the same key exactly
// when those four fields are equal. Pure.
std::string SemanticKey(const AuditRecord& record);

// Returns OK when `record` can be appended: kind and run_id non-empty, and
// every string (ids, fact, trace) is valid UTF-8 so it can be stored and
// hashed canonically. InvalidArgument naming the first bad field otherwise
// (the message names the field, never its value).
absl::Status ValidateAuditRecord(const AuditRecord& record);

// The result of AuditLog::Append.
enum class AppendOutcome {
  kAppended,   // a new record now occupies its slot (durable)
  kDuplicate,  // same slot, same business fact: nothing written
  kConflict,   // same slot, different business fact: reported, nothing written
};

// "appended", "duplicate" or "conflict", for logs and tests.
std::string_view AppendOutcomeName(AppendOutcome outcome);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_AUDIT_AUDIT_RECORD_H_
