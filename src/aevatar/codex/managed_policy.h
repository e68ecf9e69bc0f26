#ifndef AEVATAR_AEVATAR_CODEX_MANAGED_POLICY_H_
#define AEVATAR_AEVATAR_CODEX_MANAGED_POLICY_H_

#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

// Managed codex_exec is a RolloutRestrictedPlatform capability: the platform
// owns it, but a typed rollout boundary and an eligibility policy limit who
// may use it (spec: sandbox-execution.md, "RolloutRestrictedPlatform"). The
// policy is private to this class: it never filters code_execute or
// CallerConnected inventory, and their resolvers never change it.
namespace aevatar::orchestrator {

inline constexpr char kCodexCapabilityClass[] = "RolloutRestrictedPlatform";
// The only rollout boundary of the current internal rollout.
inline constexpr char kCodexRolloutBoundary[] = "InternalOnly";

// The operator's switch (`aevatar serve --managed-codex off|allowlist|all`).
enum class EligibilityMode { kOff, kAllowlist, kAll };

struct ManagedCodexPolicy {
  EligibilityMode mode = EligibilityMode::kOff;
  // NyxID user ids (subjects) admitted under kAllowlist.
  std::set<std::string> allowlist;

  // "Off" / "Allowlist" / "All" (the spec's Eligibility.Mode names).
  std::string_view ModeName() const;
  // OK when `user_id` may use managed codex_exec; managed_target_disabled
  // when the mode is off; managed_feature_not_enabled when the user is
  // outside the allowlist.
  absl::Status Check(const std::string& user_id) const;
};

// Parses the operator flags: mode "off" | "allowlist" | "all" and a
// comma-separated list of user ids (blanks trimmed, empties dropped).
// InvalidArgument on an unknown mode or an allowlist without allowlist mode.
absl::StatusOr<ManagedCodexPolicy> ParseManagedCodexPolicy(std::string_view mode,
                                                           std::string_view allowlist);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_MANAGED_POLICY_H_
