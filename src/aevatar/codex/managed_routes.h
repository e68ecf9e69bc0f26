#ifndef AEVATAR_AEVATAR_CODEX_MANAGED_ROUTES_H_
#define AEVATAR_AEVATAR_CODEX_MANAGED_ROUTES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/routes/route_inventory.h"

// The two NyxID UserServices a managed codex_exec call needs (spec:
// codex-exec-node-setup.md, "Required readiness" 3), selected fail closed
// from the user's typed inventory. Private to managed codex_exec
// (RolloutRestrictedPlatform): code_execute's resolver and convergence are
// not used and not affected. Pure code.
namespace aevatar::orchestrator {

struct ManagedRoutes {
  RouteFacts chrono;  // the exact chrono-sandbox route (_nyxid_via); never logged
  RouteFacts llm;     // the chrono-llm-public route (model_route.user_service_id)
};

// Selects, for `user_id`:
//  chrono: exactly one route with catalog_service_id == `chrono_catalog_id`,
//          owned directly by the user (owner type user, id == user_id),
//          active, forward_access_token == true and a delegation scope
//          containing proxy:*;
//  llm:    exactly one route with catalog_service_id == `llm_catalog_id`,
//          active, owned by the user or shared with credential_source.allowed.
// managed_user_services_unavailable otherwise; the detail says which route
// and how many candidates, never an id.
absl::StatusOr<ManagedRoutes> SelectManagedRoutes(const std::vector<RouteFacts>& inventory,
                                                  const std::string& user_id,
                                                  const std::string& chrono_catalog_id,
                                                  const std::string& llm_catalog_id);

// Only the chrono-sandbox half of SelectManagedRoutes (credential provisioning
// restricts the key to it).
absl::StatusOr<RouteFacts> SelectManagedChronoRoute(const std::vector<RouteFacts>& inventory,
                                                    const std::string& user_id,
                                                    const std::string& chrono_catalog_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CODEX_MANAGED_ROUTES_H_
