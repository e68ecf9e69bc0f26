#include "aevatar/audit/audit_append.h"

#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"

namespace aevatar::orchestrator {

absl::Status PrepareForAppend(AuditRecord& record) {
  if (absl::Status s = ValidateAuditRecord(record); !s.ok()) return s;
  if (record.record_id.empty()) record.record_id = base::RandomId("aud_");
  record.recorded_at_ms = base::NowUnixMs();
  // The hash is the identity every later replay is compared against.
  record.content_hash = ContentHash(record);
  return absl::OkStatus();
}

AppendOutcome OccupiedSlotOutcome(const AuditRecord& record, const std::string& stored_hash) {
  // Compared with the hash persisted at first append, so rows written by an
  // older binary keep matching their replays (rolling upgrade).
  if (stored_hash == record.content_hash) return AppendOutcome::kDuplicate;
  // Reported, not written. Ids and hashes only: the fact may carry business
  // detail that does not belong in a log line.
  base::Log(base::LogLevel::kWarn, "audit.append_conflict", record.run_id,
            {{"kind", record.kind},
             {"step_id", record.step_id},
             {"call_id", record.call_id},
             {"stored_hash", stored_hash},
             {"rejected_hash", record.content_hash}});
  return AppendOutcome::kConflict;
}

absl::StatusOr<nlohmann::json> ParseStoredFact(const std::string& text,
                                               const std::string& record_id) {
  nlohmann::json fact = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (fact.is_discarded()) {
    return absl::DataLossError(absl::StrCat("audit record ", record_id, " has a corrupt fact"));
  }
  return fact;
}

}  // namespace aevatar::orchestrator
