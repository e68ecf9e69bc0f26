#include "aevatar/codex/managed_routes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "aevatar/codex/managed_errors.h"
#include "aevatar/routes/route_resolution.h"

namespace aevatar::orchestrator {
namespace {

bool IsCatalog(const RouteFacts& route, const std::string& catalog_id) {
  return route.catalog_service_id && *route.catalog_service_id == catalog_id;
}

bool OwnedBy(const RouteFacts& route, const std::string& user_id) {
  return route.owner_type == "user" && route.owner_id == user_id;
}

absl::Status Unavailable(const char* which, size_t count) {
  return ManagedError(
      kManagedUserServicesUnavailable,
      absl::StrCat("exactly one usable ", which, " UserService is required; ", count, " found"));
}

}  // namespace

absl::StatusOr<RouteFacts> SelectManagedChronoRoute(const std::vector<RouteFacts>& inventory,
                                                    const std::string& user_id,
                                                    const std::string& chrono_catalog_id) {
  std::vector<const RouteFacts*> usable;
  for (const RouteFacts& route : inventory) {
    if (!IsCatalog(route, chrono_catalog_id) || !OwnedBy(route, user_id) || !route.active ||
        !route.forward_access_token) {
      continue;
    }
    if (std::find(route.scopes.begin(), route.scopes.end(), kProxyScope) == route.scopes.end()) {
      continue;
    }
    usable.push_back(&route);
  }
  if (usable.size() != 1)
    return Unavailable("directly owned, active chrono-sandbox", usable.size());
  return *usable.front();
}

absl::StatusOr<ManagedRoutes> SelectManagedRoutes(const std::vector<RouteFacts>& inventory,
                                                  const std::string& user_id,
                                                  const std::string& chrono_catalog_id,
                                                  const std::string& llm_catalog_id) {
  auto chrono = SelectManagedChronoRoute(inventory, user_id, chrono_catalog_id);
  if (!chrono.ok()) return chrono.status();
  std::vector<const RouteFacts*> usable;
  for (const RouteFacts& route : inventory) {
    if (IsCatalog(route, llm_catalog_id) && route.active &&
        (OwnedBy(route, user_id) || route.credential_source_allowed)) {
      usable.push_back(&route);
    }
  }
  if (usable.size() != 1) return Unavailable("chrono-llm-public", usable.size());
  return ManagedRoutes{*std::move(chrono), *usable.front()};
}

}  // namespace aevatar::orchestrator
