#include "aevatar/codex/managed_policy.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "aevatar/codex/managed_errors.h"

namespace aevatar::orchestrator {

std::string_view ManagedCodexPolicy::ModeName() const {
  switch (mode) {
    case EligibilityMode::kOff:
      return "Off";
    case EligibilityMode::kAllowlist:
      return "Allowlist";
    case EligibilityMode::kAll:
      return "All";
  }
  return "Off";
}

absl::Status ManagedCodexPolicy::Check(const std::string& user_id) const {
  switch (mode) {
    case EligibilityMode::kOff:
      return ManagedError(kManagedTargetDisabled,
                          "this aevatar host does not expose the managed_sandbox target");
    case EligibilityMode::kAllowlist:
      if (!user_id.empty() && allowlist.contains(user_id)) return absl::OkStatus();
      return ManagedError(kManagedFeatureNotEnabled,
                          "the caller is outside the managed codex_exec rollout (InternalOnly)");
    case EligibilityMode::kAll:
      return user_id.empty() ? ManagedError(kManagedFeatureNotEnabled, "the caller has no subject")
                             : absl::OkStatus();
  }
  return ManagedError(kManagedTargetDisabled, "unknown eligibility mode");
}

absl::StatusOr<ManagedCodexPolicy> ParseManagedCodexPolicy(std::string_view mode,
                                                           std::string_view allowlist) {
  ManagedCodexPolicy policy;
  if (mode == "off") {
    policy.mode = EligibilityMode::kOff;
  } else if (mode == "allowlist") {
    policy.mode = EligibilityMode::kAllowlist;
  } else if (mode == "all") {
    policy.mode = EligibilityMode::kAll;
  } else {
    return absl::InvalidArgumentError("--managed-codex must be off, allowlist or all");
  }
  const std::vector<std::string> entries =
      absl::StrSplit(std::string(allowlist), ',', absl::SkipWhitespace());
  for (const std::string& entry : entries) {
    policy.allowlist.insert(std::string(absl::StripAsciiWhitespace(entry)));
  }
  if (!policy.allowlist.empty() && policy.mode != EligibilityMode::kAllowlist) {
    return absl::InvalidArgumentError("--managed-codex-allowlist needs --managed-codex allowlist");
  }
  return policy;
}

}  // namespace aevatar::orchestrator
