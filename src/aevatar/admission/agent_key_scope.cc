#include "aevatar/admission/agent_key_scope.h"

#include <algorithm>

#include "base/api_error.h"

namespace aevatar::orchestrator {

absl::Status AgentKeyRestricted(std::string detail) {
  return base::Forbidden("AGENT_KEY_RESTRICTED", std::move(detail));
}

absl::Status CheckCallerScope(const Caller& caller, CallerScope scope) {
  if (scope == CallerScope::kExecution || !caller.RestrictedAgentKey()) return absl::OkStatus();
  return AgentKeyRestricted(
      "this Agent Key is restricted to some services (allowed_services): at aevatar it may only "
      "call tools and start saved workflows; reading or managing the user's runs, workflows, "
      "approvals and audit takes the user's login or an unrestricted key");
}

bool AllowedServicesNameRoute(const std::vector<std::string>& allowed_services,
                              std::string_view route_id, std::string_view slug) {
  if (allowed_services.empty()) return true;
  return std::any_of(
      allowed_services.begin(), allowed_services.end(), [&](const std::string& entry) {
        return (!route_id.empty() && entry == route_id) || (!slug.empty() && entry == slug);
      });
}

absl::Status CheckAgentKeyAllowsRoute(const std::vector<std::string>& allowed_services,
                                      std::string_view route_id, std::string_view slug) {
  if (AllowedServicesNameRoute(allowed_services, route_id, slug)) return absl::OkStatus();
  return base::Forbidden("AGENT_KEY_SERVICE_NOT_ALLOWED",
                         "this Agent Key is not allowed to use the route this call runs on: its "
                         "allowed_services name neither the route's id nor its slug");
}

}  // namespace aevatar::orchestrator
