#include "absl/strings/str_cat.h"
#include "nyxid/store/pg_rows.h"
#include "nyxid/store/postgres_nyxid_store.h"
#include "nyxid/store/store_rows.h"

// Catalog services and UserService routes.
namespace aevatar::nyxid {

using pg_rows::PgRow;
using rows::kCatalogColumns;
using rows::kRouteColumns;
using rows::OpenedCatalog;

absl::Status PostgresNyxidStore::PutCatalogService(const CatalogService& service) {
  return pg_rows::Exec(
             *pool_, "catalog service",
             absl::StrCat("INSERT INTO nyxid_catalog_services (", kCatalogColumns,
                          ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) "
                          "ON CONFLICT (id) DO UPDATE SET slug = EXCLUDED.slug, "
                          "name = EXCLUDED.name, kind = EXCLUDED.kind, "
                          "base_url = EXCLUDED.base_url, "
                          "forward_access_token = EXCLUDED.forward_access_token, "
                          "inject_delegation_token = EXCLUDED.inject_delegation_token, "
                          "delegation_token_scope = EXCLUDED.delegation_token_scope, "
                          "auto_connect = EXCLUDED.auto_connect, "
                          "provider_api_key_sealed = EXCLUDED.provider_api_key_sealed, "
                          "model_allowlist = EXCLUDED.model_allowlist, "
                          "delegation_audiences = EXCLUDED.delegation_audiences, "
                          "allow_link_local = EXCLUDED.allow_link_local"),
             service.id, service.slug, service.name, std::string(ServiceKindName(service.kind)),
             service.base_url, service.default_policy.forward_access_token,
             service.default_policy.inject_delegation_token,
             JoinScopes(service.default_policy.delegation_token_scope), service.auto_connect,
             rows::SealProviderKey(at_rest_key_, service.provider_api_key),
             rows::StringListColumn(service.model_allowlist),
             rows::StringListColumn(service.delegation_audiences), service.allow_link_local)
      .status();
}

absl::StatusOr<CatalogService> PostgresNyxidStore::FindCatalogService(const std::string& id) {
  return OpenedCatalog(at_rest_key_, pg_rows::One<CatalogService>(
                                         *pool_, "catalog service",
                                         absl::StrCat("SELECT ", kCatalogColumns,
                                                      " FROM nyxid_catalog_services WHERE id = $1"),
                                         rows::CatalogFromRow<PgRow>, id));
}

absl::StatusOr<std::vector<CatalogService>> PostgresNyxidStore::ListCatalog() {
  auto services = pg_rows::All<CatalogService>(
      *pool_, "catalog service",
      absl::StrCat("SELECT ", kCatalogColumns, " FROM nyxid_catalog_services ORDER BY slug"),
      rows::CatalogFromRow<PgRow>);
  if (!services.ok()) return services.status();
  return rows::OpenedCatalogs(at_rest_key_, *std::move(services));
}

absl::Status PostgresNyxidStore::InsertUserService(const UserService& route) {
  return pg_rows::Exec(*pool_, "user service",
                       absl::StrCat("INSERT INTO nyxid_user_services (", kRouteColumns,
                                    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
                                    "$13, $14, $15, $16)"),
                       route.id, route.slug, route.label, route.catalog_service_id,
                       std::string(OwnerKindName(route.owner.kind)), route.owner.id, route.active,
                       route.policy.forward_access_token, route.policy.inject_delegation_token,
                       JoinScopes(route.policy.delegation_token_scope), route.auto_connected,
                       route.credential_source_allowed, route.node_id, route.base_url,
                       route.created_at_ms, route.updated_at_ms)
      .status();
}

absl::StatusOr<UserService> PostgresNyxidStore::FindUserService(const std::string& id) {
  return pg_rows::One<UserService>(
      *pool_, "user service",
      absl::StrCat("SELECT ", kRouteColumns, " FROM nyxid_user_services WHERE id = $1"),
      rows::RouteFromRow<PgRow>, id);
}

absl::Status PostgresNyxidStore::UpdateUserService(const UserService& route) {
  auto changed = pg_rows::Exec(
      *pool_, "user service",
      "UPDATE nyxid_user_services SET label = $2, active = $3, forward_access_token = $4, "
      "inject_delegation_token = $5, delegation_token_scope = $6, "
      "credential_source_allowed = $7, node_id = $8, updated_at_ms = $9 WHERE id = $1",
      route.id, route.label, route.active, route.policy.forward_access_token,
      route.policy.inject_delegation_token, JoinScopes(route.policy.delegation_token_scope),
      route.credential_source_allowed, route.node_id, route.updated_at_ms);
  if (!changed.ok()) return changed.status();
  return *changed == 1 ? absl::OkStatus() : absl::NotFoundError("user service not found");
}

absl::StatusOr<std::vector<UserService>> PostgresNyxidStore::ListUserServices(
    const std::vector<Owner>& owners) {
  std::vector<UserService> routes;
  for (const Owner& owner : owners) {
    auto owned = pg_rows::All<UserService>(
        *pool_, "user service",
        absl::StrCat("SELECT ", kRouteColumns,
                     " FROM nyxid_user_services WHERE owner_kind = $1 AND owner_id = $2 "
                     "ORDER BY created_at_ms, id"),
        rows::RouteFromRow<PgRow>, std::string(OwnerKindName(owner.kind)), owner.id);
    if (!owned.ok()) return owned.status();
    routes.insert(routes.end(), owned->begin(), owned->end());
  }
  return routes;
}

absl::StatusOr<std::vector<UserService>> PostgresNyxidStore::ListAutoConnected(
    const std::string& catalog_service_id) {
  return pg_rows::All<UserService>(
      *pool_, "user service",
      absl::StrCat("SELECT ", kRouteColumns,
                   " FROM nyxid_user_services WHERE catalog_service_id = $1 "
                   "AND auto_connected ORDER BY created_at_ms, id"),
      rows::RouteFromRow<PgRow>, catalog_service_id);
}

absl::StatusOr<UserService> PostgresNyxidStore::FindUserServiceBySlug(const Owner& owner,
                                                                      const std::string& slug) {
  return pg_rows::One<UserService>(
      *pool_, "user service",
      absl::StrCat("SELECT ", kRouteColumns,
                   " FROM nyxid_user_services WHERE owner_kind = $1 AND owner_id = $2 "
                   "AND slug = $3"),
      rows::RouteFromRow<PgRow>, std::string(OwnerKindName(owner.kind)), owner.id, slug);
}

}  // namespace aevatar::nyxid
