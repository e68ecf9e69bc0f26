#include "absl/strings/str_cat.h"
#include "nyxid/store/sqlite_nyxid_store.h"
#include "nyxid/store/sqlite_rows.h"
#include "nyxid/store/store_rows.h"

// Catalog services and UserService routes.
namespace aevatar::nyxid {

using rows::kCatalogColumns;
using rows::kRouteColumns;
using rows::OpenedCatalog;
using sqlite_rows::SqliteRow;

using sqlite_rows::All;
using sqlite_rows::One;
constexpr auto SqliteCatalogFromRow = rows::CatalogFromRow<SqliteRow>;
constexpr auto SqliteRouteFromRow = rows::RouteFromRow<SqliteRow>;

absl::Status SqliteNyxidStore::PutCatalogService(const CatalogService& service) {
  const std::string kind(ServiceKindName(service.kind));
  const std::string scope = JoinScopes(service.default_policy.delegation_token_scope);
  const std::string sealed = rows::SealProviderKey(at_rest_key_, service.provider_api_key);
  const std::string models = rows::StringListColumn(service.model_allowlist);
  const std::string audiences = rows::StringListColumn(service.delegation_audiences);
  absl::MutexLock lock(&mu_);
  return db_
      .Run(absl::StrCat("INSERT INTO catalog_services (", kCatalogColumns,
                        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
                        "ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, "
                        "name = excluded.name, kind = excluded.kind, base_url = excluded.base_url, "
                        "forward_access_token = excluded.forward_access_token, "
                        "inject_delegation_token = excluded.inject_delegation_token, "
                        "delegation_token_scope = excluded.delegation_token_scope, "
                        "auto_connect = excluded.auto_connect, "
                        "provider_api_key_sealed = excluded.provider_api_key_sealed, "
                        "model_allowlist = excluded.model_allowlist, "
                        "delegation_audiences = excluded.delegation_audiences, "
                        "allow_link_local = excluded.allow_link_local"),
           {service.id, service.slug, service.name, kind, service.base_url,
            int64_t{service.default_policy.forward_access_token},
            int64_t{service.default_policy.inject_delegation_token}, scope,
            int64_t{service.auto_connect}, sealed, models, audiences,
            int64_t{service.allow_link_local}})
      .status();
}

absl::StatusOr<CatalogService> SqliteNyxidStore::FindCatalogService(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return OpenedCatalog(
      at_rest_key_,
      One<CatalogService>(db_.Prepare(absl::StrCat("SELECT ", kCatalogColumns,
                                                   " FROM catalog_services WHERE id = ?1"),
                                      {id}),
                          SqliteCatalogFromRow, "catalog service"));
}

absl::StatusOr<std::vector<CatalogService>> SqliteNyxidStore::ListCatalog() {
  absl::MutexLock lock(&mu_);
  auto services = All<CatalogService>(
      db_.Prepare(absl::StrCat("SELECT ", kCatalogColumns, " FROM catalog_services ORDER BY slug")),
      SqliteCatalogFromRow);
  if (!services.ok()) return services.status();
  return rows::OpenedCatalogs(at_rest_key_, *std::move(services));
}

absl::Status SqliteNyxidStore::InsertUserService(const UserService& route) {
  const std::string owner_kind(OwnerKindName(route.owner.kind));
  const std::string scope = JoinScopes(route.policy.delegation_token_scope);
  absl::MutexLock lock(&mu_);
  auto statement = db_.Prepare(
      absl::StrCat("INSERT INTO user_services (", kRouteColumns,
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                   "?16)"));
  if (!statement.ok()) return statement.status();
  store::Statement& s = *statement;
  for (absl::Status st :
       {s.BindText(1, route.id), s.BindText(2, route.slug), s.BindText(3, route.label),
        BindOptional(s, 4, route.catalog_service_id), s.BindText(5, owner_kind),
        s.BindText(6, route.owner.id), s.BindInt64(7, route.active),
        s.BindInt64(8, route.policy.forward_access_token),
        s.BindInt64(9, route.policy.inject_delegation_token), s.BindText(10, scope),
        s.BindInt64(11, route.auto_connected), s.BindInt64(12, route.credential_source_allowed),
        BindOptional(s, 13, route.node_id), s.BindText(14, route.base_url),
        s.BindInt64(15, route.created_at_ms), s.BindInt64(16, route.updated_at_ms)}) {
    if (!st.ok()) return st;
  }
  return s.Run();
}

absl::StatusOr<UserService> SqliteNyxidStore::FindUserService(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return One<UserService>(
      db_.Prepare(absl::StrCat("SELECT ", kRouteColumns, " FROM user_services WHERE id = ?1"),
                  {id}),
      SqliteRouteFromRow, "user service");
}

absl::Status SqliteNyxidStore::UpdateUserService(const UserService& route) {
  const std::string scope = JoinScopes(route.policy.delegation_token_scope);
  absl::MutexLock lock(&mu_);
  auto statement = db_.Prepare(
      "UPDATE user_services SET label = ?2, active = ?3, forward_access_token = ?4, "
      "inject_delegation_token = ?5, delegation_token_scope = ?6, "
      "credential_source_allowed = ?7, node_id = ?8, updated_at_ms = ?9 WHERE id = ?1");
  if (!statement.ok()) return statement.status();
  store::Statement& s = *statement;
  for (absl::Status st :
       {s.BindText(1, route.id), s.BindText(2, route.label), s.BindInt64(3, route.active),
        s.BindInt64(4, route.policy.forward_access_token),
        s.BindInt64(5, route.policy.inject_delegation_token), s.BindText(6, scope),
        s.BindInt64(7, route.credential_source_allowed), BindOptional(s, 8, route.node_id),
        s.BindInt64(9, route.updated_at_ms)}) {
    if (!st.ok()) return st;
  }
  if (absl::Status st = s.Run(); !st.ok()) return st;
  return db_.Changes() == 1 ? absl::OkStatus() : absl::NotFoundError("user service not found");
}

absl::StatusOr<std::vector<UserService>> SqliteNyxidStore::ListUserServices(
    const std::vector<Owner>& owners) {
  std::vector<UserService> routes;
  absl::MutexLock lock(&mu_);
  for (const Owner& owner : owners) {
    const std::string owner_kind(OwnerKindName(owner.kind));
    auto rows = All<UserService>(
        db_.Prepare(absl::StrCat("SELECT ", kRouteColumns,
                                 " FROM user_services WHERE owner_kind = ?1 AND owner_id = ?2 "
                                 "ORDER BY created_at_ms, id"),
                    {owner_kind, owner.id}),
        SqliteRouteFromRow);
    if (!rows.ok()) return rows.status();
    routes.insert(routes.end(), rows->begin(), rows->end());
  }
  return routes;
}

absl::StatusOr<std::vector<UserService>> SqliteNyxidStore::ListAutoConnected(
    const std::string& catalog_service_id) {
  absl::MutexLock lock(&mu_);
  return All<UserService>(
      db_.Prepare(absl::StrCat("SELECT ", kRouteColumns,
                               " FROM user_services WHERE catalog_service_id = ?1 "
                               "AND auto_connected = 1 ORDER BY created_at_ms, id"),
                  {catalog_service_id}),
      SqliteRouteFromRow);
}

absl::StatusOr<UserService> SqliteNyxidStore::FindUserServiceBySlug(const Owner& owner,
                                                                    const std::string& slug) {
  const std::string owner_kind(OwnerKindName(owner.kind));
  absl::MutexLock lock(&mu_);
  return One<UserService>(
      db_.Prepare(absl::StrCat("SELECT ", kRouteColumns,
                               " FROM user_services WHERE owner_kind = ?1 AND owner_id = ?2 "
                               "AND slug = ?3"),
                  {owner_kind, owner.id, slug}),
      SqliteRouteFromRow, "user service");
}

}  // namespace aevatar::nyxid
