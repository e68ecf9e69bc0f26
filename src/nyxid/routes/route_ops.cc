#include "nyxid/routes/route_ops.h"

#include "base/api_error.h"
#include "base/crypto.h"
#include "nyxid/routes/route_access.h"

namespace aevatar::nyxid {
namespace {

absl::Status Conflict() {
  return base::ApiError(absl::StatusCode::kAlreadyExists, "USER_SERVICE_CONFLICT",
                        "you already have a service with this slug or label", 409);
}

absl::Status ValidateLabel(const std::string& label) {
  if (label.empty() || label.size() > 200) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "USER_SERVICE_LABEL_INVALID",
                          "a label is 1 to 200 characters", 400);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<Owner> VisibleOwners(const Principal& caller) {
  std::vector<Owner> owners = {{OwnerKind::kUser, caller.user.id}};
  for (const Membership& membership : caller.memberships) {
    owners.push_back({OwnerKind::kOrg, membership.org_id});
  }
  return owners;
}

absl::StatusOr<UserService> CreatePersonalRoute(NyxidStore& store, const Principal& caller,
                                                const CreateRouteRequest& request, int64_t now_ms) {
  if (request.catalog_service_id.empty()) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "CATALOG_SERVICE_REQUIRED",
                          "catalog_service_id is required", 400);
  }
  auto catalog = store.FindCatalogService(request.catalog_service_id);
  if (absl::IsNotFound(catalog.status())) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "CATALOG_SERVICE_UNKNOWN",
                          "no catalog service has this id", 400);
  }
  if (!catalog.ok()) return catalog.status();
  UserService route;
  route.id = base::RandomId("us_");
  route.slug = request.slug.value_or(catalog->slug);
  if (!IsValidSlug(route.slug)) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "USER_SERVICE_SLUG_INVALID",
                          "a slug is 1 to 63 characters of a-z, 0-9 and '-'", 400);
  }
  route.label = request.label.value_or(route.slug);
  if (absl::Status st = ValidateLabel(route.label); !st.ok()) return st;
  route.catalog_service_id = catalog->id;
  route.owner = {OwnerKind::kUser, caller.user.id};
  route.active = request.active.value_or(true);
  route.policy.forward_access_token =
      request.forward_access_token.value_or(catalog->default_policy.forward_access_token);
  route.policy.inject_delegation_token =
      request.inject_delegation_token.value_or(catalog->default_policy.inject_delegation_token);
  route.policy.delegation_token_scope = NormalizeScopes(
      request.delegation_token_scope.value_or(catalog->default_policy.delegation_token_scope));
  route.node_id = request.node_id;
  route.created_at_ms = now_ms;
  route.updated_at_ms = now_ms;
  absl::Status inserted = store.InsertUserService(route);
  if (absl::IsAlreadyExists(inserted)) return Conflict();
  if (!inserted.ok()) return inserted;
  return route;
}

absl::StatusOr<UserService> PatchRoute(NyxidStore& store, const Principal& caller,
                                       const std::string& id, const RoutePatch& patch,
                                       int64_t now_ms) {
  auto route = store.FindUserService(id);
  if (absl::IsNotFound(route.status())) {
    return base::ApiError(absl::StatusCode::kNotFound, "USER_SERVICE_NOT_FOUND",
                          "no such user service", 404);
  }
  if (!route.ok()) return route.status();
  if (absl::Status st = CheckWritable(caller, *route); !st.ok()) return st;
  if (patch.label) {
    if (absl::Status st = ValidateLabel(*patch.label); !st.ok()) return st;
    route->label = *patch.label;
  }
  if (patch.active) route->active = *patch.active;
  if (patch.forward_access_token) route->policy.forward_access_token = *patch.forward_access_token;
  if (patch.inject_delegation_token) {
    route->policy.inject_delegation_token = *patch.inject_delegation_token;
  }
  if (patch.delegation_token_scope) {
    route->policy.delegation_token_scope = NormalizeScopes(*patch.delegation_token_scope);
  }
  if (patch.credential_source_allowed) {
    route->credential_source_allowed = *patch.credential_source_allowed;
  }
  if (patch.node_id) route->node_id = *patch.node_id;
  route->updated_at_ms = now_ms;
  absl::Status updated = store.UpdateUserService(*route);
  if (absl::IsAlreadyExists(updated)) return Conflict();
  if (!updated.ok()) return updated;
  return route;
}

absl::StatusOr<int> ResyncIdentity(NyxidStore& store, const std::string& catalog_service_id,
                                   int64_t now_ms) {
  auto catalog = store.FindCatalogService(catalog_service_id);
  if (absl::IsNotFound(catalog.status())) {
    return base::ApiError(absl::StatusCode::kNotFound, "CATALOG_SERVICE_NOT_FOUND",
                          "no catalog service has this id", 404);
  }
  if (!catalog.ok()) return catalog.status();
  auto routes = store.ListAutoConnected(catalog->id);
  if (!routes.ok()) return routes.status();
  int changed = 0;
  for (UserService& route : *routes) {
    const CredentialPolicy& policy = catalog->default_policy;
    if (route.policy.forward_access_token == policy.forward_access_token &&
        route.policy.inject_delegation_token == policy.inject_delegation_token &&
        route.policy.delegation_token_scope == policy.delegation_token_scope) {
      continue;
    }
    route.policy = policy;
    route.updated_at_ms = now_ms;
    if (absl::Status st = store.UpdateUserService(route); !st.ok()) return st;
    ++changed;
  }
  return changed;
}

absl::Status EnsureAutoConnectedRoutes(NyxidStore& store, int64_t now_ms) {
  auto catalog = store.ListCatalog();
  if (!catalog.ok()) return catalog.status();
  auto users = store.ListUsers();
  if (!users.ok()) return users.status();
  for (const CatalogService& service : *catalog) {
    if (!service.auto_connect) continue;
    for (const User& user : *users) {
      const Owner owner{OwnerKind::kUser, user.id};
      auto existing = store.FindUserServiceBySlug(owner, service.slug);
      if (existing.ok()) continue;
      if (!absl::IsNotFound(existing.status())) return existing.status();
      UserService route;
      route.id = base::RandomId("us_");
      route.slug = service.slug;
      route.label = service.name.empty() ? service.slug : service.name;
      route.catalog_service_id = service.id;
      route.owner = owner;
      route.policy = service.default_policy;
      route.auto_connected = true;
      route.created_at_ms = now_ms;
      route.updated_at_ms = now_ms;
      absl::Status inserted = store.InsertUserService(route);
      if (!inserted.ok() && !absl::IsAlreadyExists(inserted)) return inserted;
    }
  }
  return absl::OkStatus();
}

}  // namespace aevatar::nyxid
