#ifndef AEVATAR_CHRONO_OPERATION_H_
#define AEVATAR_CHRONO_OPERATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aevatar::chrono {

// Lifecycle of a durable execution:
//
//   queued ──claim──► running ──finish──► succeeded | failed
//     │                  │
//     └─cancel─► cancelled ◄─cancel (program killed)
//                        running ──runner died──► outcome_uncertain
//
// A claim holds a lease that the claiming runner renews while the program
// runs; when the runner dies the lease expires and any live runner (or the
// same runner, restarted) settles the operation as outcome_uncertain.
// Terminal states never change again. An operation is never silently re-run.
enum class OperationStatus {
  kQueued,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
  kOutcomeUncertain
};

std::string_view OperationStatusName(OperationStatus status);
std::optional<OperationStatus> ParseOperationStatus(std::string_view name);
bool IsTerminal(OperationStatus status);

struct Operation {
  std::string id;     // "op_…", random; the only identity callers see
  std::string owner;  // the delegation token's subject; operations are private to it
  // SHA-256 hex of the raw Idempotency-Key. The raw key is never stored.
  std::string idempotency_key_hash;
  // SHA-256 hex of the canonical request: same key + different payload is a conflict.
  std::string fingerprint;
  // The canonical request JSON (holds the source). Needed to run after a
  // restart; cleared once the operation is terminal.
  std::string request;
  // Server-granted program environment (e.g. NYXID_API_KEY), sealed with the
  // service's at-rest key; "" when none. Cleared once terminal.
  std::string sealed_credentials;
  OperationStatus status = OperationStatus::kQueued;
  int64_t created_at_ms = 0;
  int64_t started_at_ms = 0;   // 0 until claimed
  int64_t finished_at_ms = 0;  // 0 until terminal
  int64_t expires_at_ms = 0;   // retention end; after it the operation is expired
  // Increases by one on every change of the status document (status, times);
  // the ETag is derived from (id, version).
  int64_t version = 1;
  bool cancel_requested = false;  // a cancel arrived while running
  std::string result;             // result JSON once terminal, "" before
  std::string claimed_by;         // runner instance that claimed it, while running
  bool expired = false;           // retention ended: a tombstone without payloads
  // While running: when the claim lapses unless the runner renews it (the
  // runner's clock). 0 otherwise. Not part of the status document.
  int64_t lease_expires_at_ms = 0;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_OPERATION_H_
