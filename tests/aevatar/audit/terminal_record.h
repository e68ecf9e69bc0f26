#ifndef AEVATAR_TESTS_AEVATAR_AUDIT_TERMINAL_RECORD_H_
#define AEVATAR_TESTS_AEVATAR_AUDIT_TERMINAL_RECORD_H_

#include "aevatar/audit/audit_record.h"

namespace aevatar::orchestrator {

// A complete tool.terminal record of run_1 (every id set, a nested fact, a
// trace), for the audit tests.
inline AuditRecord TerminalRecord() {
  AuditRecord r;
  r.kind = "tool.terminal";
  r.run_id = "run_1";
  r.workflow_id = "wf_1";
  r.step_id = "normalize_person";
  r.call_id = "call_1";
  r.request_id = "req_1";
  r.approval_id = "apr_1";
  r.correlation_id = "corr_1";
  r.causation_id = "cause_1";
  r.fact = nlohmann::json::parse(R"({"outcome":"succeeded","exit_code":0,"retryable":false,
                           "receipt":{"operation":"op_1","ms":8825.5}})");
  r.trace = {"trace_a", "span_a", "00-trace_a-span_a-01", "vendor=a"};
  r.occurred_at_ms = 1000;
  return r;
}

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_TESTS_AEVATAR_AUDIT_TERMINAL_RECORD_H_
