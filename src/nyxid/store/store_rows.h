#ifndef AEVATAR_NYXID_STORE_STORE_ROWS_H_
#define AEVATAR_NYXID_STORE_STORE_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nyxid/model.h"
#include "nyxid/nodes/node_store.h"

// Private to src/nyxid: the row mapping both store backends share (SQLite
// and PostgreSQL hold the same columns under the same names). A backend
// adapts its row type to the `Row` these templates read:
//   std::string Text(int i) const;  int64_t Int(int i) const;
//   bool Flag(int i) const;         bool Null(int i) const;
// so a column is decoded, validated and defaulted in one place.
namespace aevatar::nyxid::rows {

// SELECT lists; every FromRow below reads its columns in this order.
inline constexpr char kUserColumns[] =
    "id, username, password_hash, platform_admin, created_at_ms, tokens_not_before_ms";
inline constexpr char kKeyColumns[] =
    "id, user_id, label, key_hash, key_prefix, allowed_services, created_at_ms, revoked_at_ms";
inline constexpr char kCatalogColumns[] =
    "id, slug, name, kind, base_url, forward_access_token, inject_delegation_token, "
    "delegation_token_scope, auto_connect, provider_api_key_sealed, model_allowlist, "
    "delegation_audiences, allow_link_local";
inline constexpr char kRouteColumns[] =
    "id, slug, label, catalog_service_id, owner_kind, owner_id, active, forward_access_token, "
    "inject_delegation_token, delegation_token_scope, auto_connected, credential_source_allowed, "
    "node_id, base_url, created_at_ms, updated_at_ms";
inline constexpr char kAuditColumns[] = "seq, at_ms, actor, action, target_type, target_id, detail";
inline constexpr char kNodeColumns[] =
    "id, user_id, name, secret_hash, created_at_ms, last_seen_ms";
inline constexpr char kTokenColumns[] = "token_hash, user_id, node_name, expires_at_ms";
inline constexpr char kSshTargetColumns[] = "user_service_id, host, port, principals";

// The strings of a JSON array column (non-strings and non-arrays skipped).
std::vector<std::string> StringList(const std::string& column);
// `items` as a JSON array column.
std::string StringListColumn(const std::vector<std::string>& items);

// The provider key column: "" for none, else base64url(SecretBoxSeal(key)).
std::string SealProviderKey(const std::string& at_rest_key, const std::string& provider_key);
// Replaces the sealed key CatalogFromRow left in `service` with the key;
// DataLoss when it cannot be opened (another at-rest key, a damaged column).
absl::StatusOr<CatalogService> OpenedCatalog(const std::string& at_rest_key,
                                             absl::StatusOr<CatalogService> service);

// OpenedCatalog for each of `services`; the first error.
absl::StatusOr<std::vector<CatalogService>> OpenedCatalogs(const std::string& at_rest_key,
                                                           std::vector<CatalogService> services);

// ssh_targets.principals must be a JSON array of strings: DataLoss otherwise.
absl::StatusOr<std::vector<std::string>> PrincipalsFromColumn(const std::string& column);

template <typename Row>
User UserFromRow(const Row& row) {
  User user;
  user.id = row.Text(0);
  user.username = row.Text(1);
  user.password_hash = row.Text(2);
  user.platform_admin = row.Flag(3);
  user.created_at_ms = row.Int(4);
  user.tokens_not_before_ms = row.Int(5);
  return user;
}

template <typename Row>
AgentKeyRecord KeyFromRow(const Row& row) {
  AgentKeyRecord key;
  key.id = row.Text(0);
  key.user_id = row.Text(1);
  key.label = row.Text(2);
  key.key_hash_hex = row.Text(3);
  key.key_prefix = row.Text(4);
  key.allowed_services = StringList(row.Text(5));
  key.created_at_ms = row.Int(6);
  if (!row.Null(7)) key.revoked_at_ms = row.Int(7);
  return key;
}

template <typename Row>
Org OrgFromRow(const Row& row) {
  return Org{row.Text(0), row.Text(1), row.Text(2)};
}

// Nullopt for a row with an unknown role: it grants nothing (fail closed).
template <typename Row>
std::optional<Membership> MembershipFromRow(const Row& row) {
  auto role = ParseOrgRole(row.Text(2));
  if (!role.ok()) return std::nullopt;
  return Membership{row.Text(0), row.Text(1), *role};
}

template <typename Row>
RegisteredClient ClientFromRow(const Row& row) {
  return RegisteredClient{row.Text(0), row.Text(1)};
}

// The memberships among `rows` whose role is known.
std::vector<Membership> KnownMemberships(const std::vector<std::optional<Membership>>& found);

// The provider key is still sealed here: OpenedCatalog opens it.
template <typename Row>
CatalogService CatalogFromRow(const Row& row) {
  CatalogService service;
  service.id = row.Text(0);
  service.slug = row.Text(1);
  service.name = row.Text(2);
  service.kind = ParseServiceKind(row.Text(3)).value_or(ServiceKind::kHttp);
  service.base_url = row.Text(4);
  service.default_policy.forward_access_token = row.Flag(5);
  service.default_policy.inject_delegation_token = row.Flag(6);
  service.default_policy.delegation_token_scope = NormalizeScopes(row.Text(7));
  service.auto_connect = row.Flag(8);
  service.provider_api_key = row.Text(9);
  service.model_allowlist = StringList(row.Text(10));
  service.delegation_audiences = StringList(row.Text(11));
  service.allow_link_local = row.Flag(12);
  return service;
}

template <typename Row>
UserService RouteFromRow(const Row& row) {
  UserService route;
  route.id = row.Text(0);
  route.slug = row.Text(1);
  route.label = row.Text(2);
  if (!row.Null(3)) route.catalog_service_id = row.Text(3);
  route.owner.kind = row.Text(4) == "org" ? OwnerKind::kOrg : OwnerKind::kUser;
  route.owner.id = row.Text(5);
  route.active = row.Flag(6);
  route.policy.forward_access_token = row.Flag(7);
  route.policy.inject_delegation_token = row.Flag(8);
  route.policy.delegation_token_scope = NormalizeScopes(row.Text(9));
  route.auto_connected = row.Flag(10);
  route.credential_source_allowed = row.Flag(11);
  if (!row.Null(12)) route.node_id = row.Text(12);
  route.base_url = row.Text(13);
  route.created_at_ms = row.Int(14);
  route.updated_at_ms = row.Int(15);
  return route;
}

template <typename Row>
AdminAuditEntry AuditFromRow(const Row& row) {
  return AdminAuditEntry{row.Int(0),  row.Int(1),  row.Text(2), row.Text(3),
                         row.Text(4), row.Text(5), row.Text(6)};
}

template <typename Row>
NodeRecord NodeFromRow(const Row& row) {
  return NodeRecord{row.Text(0), row.Text(1), row.Text(2), row.Text(3), row.Int(4), row.Int(5)};
}

template <typename Row>
NodeRegistrationToken TokenFromRow(const Row& row) {
  return NodeRegistrationToken{row.Text(0), row.Text(1), row.Text(2), row.Int(3)};
}

template <typename Row>
absl::StatusOr<SshTarget> SshTargetFromRow(const Row& row) {
  auto principals = PrincipalsFromColumn(row.Text(3));
  if (!principals.ok()) return principals.status();
  return SshTarget{row.Text(0), row.Text(1), static_cast<int>(row.Int(2)), *std::move(principals)};
}

}  // namespace aevatar::nyxid::rows

#endif  // AEVATAR_NYXID_STORE_STORE_ROWS_H_
