#ifndef AEVATAR_NYXID_ROUTES_ROUTE_OPS_H_
#define AEVATAR_NYXID_ROUTES_ROUTE_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nyxid/accounts/principal.h"
#include "nyxid/store/nyxid_store.h"

// Operations on UserService routes that combine the store and the access
// rules: creation, partial update, catalog resync and auto-connection.
namespace aevatar::nyxid {

// POST /api/v1/user-services: a personal route to a catalog service.
struct CreateRouteRequest {
  std::string catalog_service_id;                                  // required
  std::optional<std::string> slug;                                 // default: the catalog slug
  std::optional<std::string> label;                                // default: the slug
  std::optional<bool> active;                                      // default true
  std::optional<bool> forward_access_token;                        // default: catalog policy
  std::optional<bool> inject_delegation_token;                     // default: catalog policy
  std::optional<std::vector<std::string>> delegation_token_scope;  // default: catalog
  std::optional<std::string> node_id;
};

// PUT /api/v1/user-services/{id}: only the fields present change.
struct RoutePatch {
  std::optional<std::string> label;
  std::optional<bool> active;
  std::optional<bool> forward_access_token;
  std::optional<bool> inject_delegation_token;
  std::optional<std::vector<std::string>> delegation_token_scope;
  std::optional<bool> credential_source_allowed;
  std::optional<std::optional<std::string>> node_id;  // explicit null clears it
};

// Creates the caller's personal route. InvalidArgument for a bad slug or an
// unknown catalog id; 409 USER_SERVICE_CONFLICT when the caller already has
// a route with that slug or label.
absl::StatusOr<UserService> CreatePersonalRoute(NyxidStore& store, const Principal& caller,
                                                const CreateRouteRequest& request, int64_t now_ms);

// Applies `patch` to route `id` after CheckWritable; returns the new state.
absl::StatusOr<UserService> PatchRoute(NyxidStore& store, const Principal& caller,
                                       const std::string& id, const RoutePatch& patch,
                                       int64_t now_ms);

// Re-applies the catalog service's default policy to every auto-connected
// route of it; returns how many routes changed. NotFound for an unknown id.
absl::StatusOr<int> ResyncIdentity(NyxidStore& store, const std::string& catalog_service_id,
                                   int64_t now_ms);

// Gives every user a personal auto-connected route to every catalog service
// marked auto_connect (slug and label = the catalog slug), unless the user
// already has a route with that slug. Idempotent.
absl::Status EnsureAutoConnectedRoutes(NyxidStore& store, int64_t now_ms);

// The owners whose routes `caller` can see: the user and each organisation.
std::vector<Owner> VisibleOwners(const Principal& caller);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ROUTES_ROUTE_OPS_H_
