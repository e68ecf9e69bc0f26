#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "nlohmann/json.hpp"
#include "nyxid/store/sqlite_nyxid_store.h"
#include "nyxid/store/sqlite_rows.h"

// Catalog services and UserService routes.
namespace aevatar::nyxid {
namespace {

constexpr char kCatalogColumns[] =
    "id, slug, name, kind, base_url, forward_access_token, inject_delegation_token, "
    "delegation_token_scope, auto_connect, provider_api_key_sealed, model_allowlist, "
    "delegation_audiences, allow_link_local";
constexpr char kRouteColumns[] =
    "id, slug, label, catalog_service_id, owner_kind, owner_id, active, forward_access_token, "
    "inject_delegation_token, delegation_token_scope, auto_connected, credential_source_allowed, "
    "node_id, base_url, created_at_ms, updated_at_ms";

// The strings of a JSON array column (non-strings skipped).
std::vector<std::string> StringList(const std::string& column) {
  std::vector<std::string> out;
  nlohmann::json items = nlohmann::json::parse(column, nullptr, false);
  if (!items.is_array()) return out;
  for (const nlohmann::json& item : items) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

CatalogService CatalogFromRow(const store::Statement& row) {
  CatalogService service;
  service.id = row.ColumnText(0);
  service.slug = row.ColumnText(1);
  service.name = row.ColumnText(2);
  service.kind = ParseServiceKind(row.ColumnText(3)).value_or(ServiceKind::kHttp);
  service.base_url = row.ColumnText(4);
  service.default_policy.forward_access_token = row.ColumnInt64(5) != 0;
  service.default_policy.inject_delegation_token = row.ColumnInt64(6) != 0;
  service.default_policy.delegation_token_scope = NormalizeScopes(row.ColumnText(7));
  service.auto_connect = row.ColumnInt64(8) != 0;
  // Still sealed here; OpenProviderKey replaces it with the key.
  service.provider_api_key = row.ColumnText(9);
  service.model_allowlist = StringList(row.ColumnText(10));
  service.delegation_audiences = StringList(row.ColumnText(11));
  service.allow_link_local = row.ColumnInt64(12) != 0;
  return service;
}

// The provider key column: "" for none, else base64url(SecretBoxSeal(key)).
std::string SealProviderKey(const std::string& at_rest_key, const std::string& provider_key) {
  if (provider_key.empty()) return "";
  return base::Base64UrlEncode(base::SecretBoxSeal(at_rest_key, provider_key));
}

absl::Status OpenProviderKey(const std::string& at_rest_key, CatalogService& service) {
  if (service.provider_api_key.empty()) return absl::OkStatus();
  auto raw = base::Base64UrlDecode(service.provider_api_key);
  service.provider_api_key.clear();
  if (!raw.ok()) return absl::DataLossError("a sealed provider key is corrupt");
  auto plain = base::SecretBoxOpen(at_rest_key, *raw);
  if (!plain.ok()) return absl::DataLossError("a sealed provider key cannot be opened");
  service.provider_api_key = std::move(*plain);
  return absl::OkStatus();
}

absl::StatusOr<CatalogService> OpenedCatalog(const std::string& at_rest_key,
                                             absl::StatusOr<CatalogService> service) {
  if (!service.ok()) return service;
  if (absl::Status st = OpenProviderKey(at_rest_key, *service); !st.ok()) return st;
  return service;
}

UserService RouteFromRow(const store::Statement& row) {
  UserService route;
  route.id = row.ColumnText(0);
  route.slug = row.ColumnText(1);
  route.label = row.ColumnText(2);
  if (!row.ColumnIsNull(3)) route.catalog_service_id = row.ColumnText(3);
  route.owner.kind = row.ColumnText(4) == "org" ? OwnerKind::kOrg : OwnerKind::kUser;
  route.owner.id = row.ColumnText(5);
  route.active = row.ColumnInt64(6) != 0;
  route.policy.forward_access_token = row.ColumnInt64(7) != 0;
  route.policy.inject_delegation_token = row.ColumnInt64(8) != 0;
  route.policy.delegation_token_scope = NormalizeScopes(row.ColumnText(9));
  route.auto_connected = row.ColumnInt64(10) != 0;
  route.credential_source_allowed = row.ColumnInt64(11) != 0;
  if (!row.ColumnIsNull(12)) route.node_id = row.ColumnText(12);
  route.base_url = row.ColumnText(13);
  route.created_at_ms = row.ColumnInt64(14);
  route.updated_at_ms = row.ColumnInt64(15);
  return route;
}

}  // namespace

using sqlite_rows::All;
using sqlite_rows::One;

absl::Status SqliteNyxidStore::PutCatalogService(const CatalogService& service) {
  const std::string kind(ServiceKindName(service.kind));
  const std::string scope = JoinScopes(service.default_policy.delegation_token_scope);
  const std::string sealed = SealProviderKey(at_rest_key_, service.provider_api_key);
  const std::string models = nlohmann::json(service.model_allowlist).dump();
  const std::string audiences = nlohmann::json(service.delegation_audiences).dump();
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
                          CatalogFromRow, "catalog service"));
}

absl::StatusOr<std::vector<CatalogService>> SqliteNyxidStore::ListCatalog() {
  absl::MutexLock lock(&mu_);
  auto services = All<CatalogService>(
      db_.Prepare(absl::StrCat("SELECT ", kCatalogColumns, " FROM catalog_services ORDER BY slug")),
      CatalogFromRow);
  if (!services.ok()) return services.status();
  for (CatalogService& service : *services) {
    if (absl::Status st = OpenProviderKey(at_rest_key_, service); !st.ok()) return st;
  }
  return services;
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
      RouteFromRow, "user service");
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
        RouteFromRow);
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
      RouteFromRow);
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
      RouteFromRow, "user service");
}

}  // namespace aevatar::nyxid
