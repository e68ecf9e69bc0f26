#include "aevatar/audit/audit_record.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

// The canonical document ContentHash digests. nlohmann::json keeps object
// keys in a std::map, so dump() emits them sorted at every depth, including
// inside `fact`: two facts that differ only in key order dump identically.
// Frozen (see the theory block in the header): adding, removing or renaming a
// key here changes every persisted hash.
json CanonicalBusinessFields(const AuditRecord& r) {
  return json{
      {"kind", r.kind},
      {"run_id", r.run_id},
      {"workflow_id", r.workflow_id},
      {"step_id", r.step_id},
      {"call_id", r.call_id},
      {"request_id", r.request_id},
      {"approval_id", r.approval_id},
      {"correlation_id", r.correlation_id},
      {"causation_id", r.causation_id},
      {"fact", r.fact},
  };
}

// True when `value` (a string, or any JSON document) serializes under the
// strict UTF-8 policy. nlohmann reports invalid UTF-8 by throwing; the
// exception stays inside this adapter.
bool DumpsStrictly(const json& value) {
  try {
    (void)value.dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace

std::string ContentHash(const AuditRecord& record) {
  // `replace` never throws; Append has already rejected invalid UTF-8, so for
  // every stored record this equals the strict dump.
  const std::string canonical =
      CanonicalBusinessFields(record).dump(-1, ' ', false, json::error_handler_t::replace);
  return absl::StrCat("sha256:", base::Sha256Hex(canonical));
}

std::string SemanticKey(const AuditRecord& record) {
  // A JSON array escapes its elements, so no choice of ids can make two
  // different slots encode alike (unlike a plain separator).
  return json::array({record.run_id, record.step_id, record.call_id, record.kind})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::Status ValidateAuditRecord(const AuditRecord& record) {
  if (record.kind.empty()) return absl::InvalidArgumentError("audit record: kind is required");
  if (record.run_id.empty()) {
    return absl::InvalidArgumentError("audit record: run_id is required");
  }
  const std::pair<const char*, const std::string*> strings[] = {
      {"record_id", &record.record_id},
      {"kind", &record.kind},
      {"run_id", &record.run_id},
      {"workflow_id", &record.workflow_id},
      {"step_id", &record.step_id},
      {"call_id", &record.call_id},
      {"request_id", &record.request_id},
      {"approval_id", &record.approval_id},
      {"correlation_id", &record.correlation_id},
      {"causation_id", &record.causation_id},
      {"trace.trace_id", &record.trace.trace_id},
      {"trace.span_id", &record.trace.span_id},
      {"trace.traceparent", &record.trace.traceparent},
      {"trace.tracestate", &record.trace.tracestate},
  };
  for (const auto& [name, value] : strings) {
    if (!DumpsStrictly(json(*value))) {
      return absl::InvalidArgumentError(
          absl::StrCat("audit record: ", std::string(name), " is not valid UTF-8"));
    }
  }
  if (!DumpsStrictly(record.fact)) {
    return absl::InvalidArgumentError("audit record: fact contains invalid UTF-8");
  }
  return absl::OkStatus();
}

std::string_view AppendOutcomeName(AppendOutcome outcome) {
  switch (outcome) {
    case AppendOutcome::kAppended:
      return "appended";
    case AppendOutcome::kDuplicate:
      return "duplicate";
    case AppendOutcome::kConflict:
      return "conflict";
  }
  return "unknown";
}

}  // namespace aevatar::orchestrator
