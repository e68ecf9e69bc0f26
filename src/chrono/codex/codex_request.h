#ifndef AEVATAR_CHRONO_CODEX_CODEX_REQUEST_H_
#define AEVATAR_CHRONO_CODEX_CODEX_REQUEST_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aevatar::chrono {

inline constexpr int kDefaultCodexTimeoutSecs = 180;
inline constexpr size_t kMaxCodexPromptBytes = 65536;
inline constexpr size_t kMaxUserServiceIdBytes = 128;

// The body of POST /codex/execute, an object with exactly these members:
//   {"prompt": string (1..65536 bytes, UTF-8),
//    "timeout_secs": int 1..600 (optional, default 180),
//    "model_route": {"user_service_id": string},
//    "run_id": string (optional)}
// The route id is 1..128 characters of [A-Za-z0-9._:-] (it becomes a URL
// query value and a log-free identifier). The run id, 1..64 characters of
// [A-Za-z0-9_-], is the caller's name for the run: POST
// /codex/runs/{run_id}/cancel by the same caller stops it.
struct CodexRequest {
  std::string prompt;
  int timeout_secs = kDefaultCodexTimeoutSecs;
  std::string user_service_id;
  std::string run_id;  // "" when the caller gave none (the run cannot be cancelled)
};

// Parses and validates a body. Every problem is InvalidArgument with the
// typed code CODEX_REQUEST_INVALID (400) and a message that names the field,
// never a value (the prompt is never echoed).
absl::StatusOr<CodexRequest> ParseCodexRequest(std::string_view body);

// A digest of the request's canonical form: equal requests (whatever their
// member order or spacing, timeout defaulted) have equal fingerprints. The
// run id is left out: it names the cancel handle, not the work, so a retry
// with the same Idempotency-Key attaches whatever run id it carries.
std::string CodexRequestFingerprint(const CodexRequest& request);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_REQUEST_H_
