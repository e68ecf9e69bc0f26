#ifndef AEVATAR_AEVATAR_APPROVALS_APPROVAL_H_
#define AEVATAR_AEVATAR_APPROVALS_APPROVAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

// A durable request for one human's decision on one exact tool call (a
// private_ssh codex_exec, say): it names the call as the human will see it,
// binds the decision to that call's digest, expires, and is decided once.
namespace aevatar::orchestrator {

// kUsed: approved, and the one run it allows has been started.
enum class ApprovalState { kPending, kApproved, kDenied, kExpired, kUsed };
std::string_view ApprovalStateName(ApprovalState state);
std::optional<ApprovalState> ParseApprovalState(std::string_view name);

struct Approval {
  std::string id;     // "appr_…", random
  std::string owner;  // the NyxID user who decides; nobody else sees it
  std::string tool;   // e.g. "codex_exec"
  // The exact call, as shown to the human (target, principal, prompt,
  // timeout). Sealed at rest; never logged.
  nlohmann::json call;
  // "sha256:<hex>" of call.dump(): the decision holds for this call only.
  std::string call_digest;
  ApprovalState state = ApprovalState::kPending;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;
  int64_t decided_at_ms = 0;  // 0 while pending (and for an expiry)
};

// Whether `id` has an approval id's shape: 1 to 64 characters of
// [A-Za-z0-9_-] (so it is safe as a path segment and a header value).
bool IsApprovalId(std::string_view id);

// The digest Approval::call_digest holds for `call`.
std::string ApprovalCallDigest(const nlohmann::json& call);

// A pending approval past its expiry reads as expired.
ApprovalState EffectiveState(const Approval& approval, int64_t now_ms);

// The approval as the API and the CLI show it (the call included: the
// owner is the only reader).
nlohmann::json ApprovalJson(const Approval& approval, int64_t now_ms);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_APPROVALS_APPROVAL_H_
