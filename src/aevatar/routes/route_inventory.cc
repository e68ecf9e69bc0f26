#include "aevatar/routes/route_inventory.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

// Every read goes through base/json_read.h (typed, never throws, STYLE §4);
// these wrappers only put the entry's position in front of its message.

absl::Status Malformed(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, " ", what));
}

absl::Status At(const std::string& where, const absl::Status& read) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", read.message()));
}

absl::StatusOr<std::string> RequiredString(const nlohmann::json& object, const char* name,
                                           const std::string& where, bool allow_empty = true) {
  auto value = base::RequiredString(object, name);
  if (!value.ok()) return At(where, value.status());
  if (!allow_empty && value->empty()) {
    return Malformed(absl::StrCat(where, ".", name), "must not be empty");
  }
  return value;
}

absl::StatusOr<bool> RequiredBool(const nlohmann::json& object, const char* name,
                                  const std::string& where) {
  auto value = base::RequiredBool(object, name);
  if (!value.ok()) return At(where, value.status());
  return value;
}

// A string or null; absent reads as null.
absl::StatusOr<std::optional<std::string>> NullableString(const nlohmann::json& object,
                                                          const char* name,
                                                          const std::string& where) {
  auto value = base::OptionalString(object, name);
  if (!value.ok()) return At(where, value.status());
  return value;
}

absl::StatusOr<const nlohmann::json*> RequiredObject(const nlohmann::json& object, const char* name,
                                                     const std::string& where) {
  auto value = base::RequiredObject(object, name);
  if (!value.ok()) return At(where, value.status());
  return value;
}

absl::StatusOr<RouteFacts> ParseRoute(const nlohmann::json& entry, const std::string& where) {
  if (!entry.is_object()) return Malformed(where, "must be an object");
  RouteFacts route;
  auto id = RequiredString(entry, "id", where, /*allow_empty=*/false);
  auto slug = RequiredString(entry, "slug", where);
  auto label = RequiredString(entry, "label", where);
  auto catalog = NullableString(entry, "catalog_service_id", where);
  auto node = NullableString(entry, "node_id", where);
  auto active = RequiredBool(entry, "active", where);
  auto forward = RequiredBool(entry, "forward_access_token", where);
  auto inject = RequiredBool(entry, "inject_delegation_token", where);
  auto scope = RequiredString(entry, "delegation_token_scope", where);
  // /keys carries auto_connected and /user-services does not; requiring it
  // keeps a listing from the wrong endpoint from reading as "not platform".
  auto auto_connected = RequiredBool(entry, "auto_connected", where);
  for (const absl::Status& st : {id.status(), slug.status(), label.status(), catalog.status(),
                                 node.status(), active.status(), forward.status(), inject.status(),
                                 scope.status(), auto_connected.status()}) {
    if (!st.ok()) return st;
  }
  auto owner = RequiredObject(entry, "owner", where);
  if (!owner.ok()) return owner.status();
  auto owner_type = RequiredString(**owner, "type", where + ".owner");
  if (!owner_type.ok()) return owner_type.status();
  if (*owner_type != "user" && *owner_type != "org") {
    return Malformed(where + ".owner.type", "must be \"user\" or \"org\"");
  }
  auto owner_id = RequiredString(**owner, "id", where + ".owner", /*allow_empty=*/false);
  if (!owner_id.ok()) return owner_id.status();
  auto source = RequiredObject(entry, "credential_source", where);
  if (!source.ok()) return source.status();
  auto allowed = RequiredBool(**source, "allowed", where + ".credential_source");
  if (!allowed.ok()) return allowed.status();

  route.id = *std::move(id);
  route.slug = *std::move(slug);
  route.label = *std::move(label);
  route.catalog_service_id = *std::move(catalog);
  route.owner_type = *std::move(owner_type);
  route.owner_id = *std::move(owner_id);
  route.active = *active;
  route.forward_access_token = *forward;
  route.inject_delegation_token = *inject;
  route.scopes = SplitScopes(*scope);
  route.auto_connected = *auto_connected;
  route.credential_source_allowed = *allowed;
  route.node_id = *std::move(node);
  return route;
}

}  // namespace

std::vector<std::string> SplitScopes(const std::string& space_separated) {
  std::vector<std::string> scopes;
  for (absl::string_view part :
       absl::StrSplit(space_separated, absl::ByAnyChar(" \t\n\r\f\v"), absl::SkipEmpty())) {
    scopes.emplace_back(part.data(), part.size());
  }
  return scopes;
}

absl::StatusOr<std::vector<RouteFacts>> ParseKeysInventory(const nlohmann::json& body) {
  if (!body.is_object()) return Malformed("keys inventory", "must be a JSON object");
  auto keys = base::RequiredArray(body, "keys");
  if (!keys.ok()) return At("keys inventory", keys.status());
  std::vector<RouteFacts> routes;
  routes.reserve((*keys)->size());
  for (size_t i = 0; i < (*keys)->size(); ++i) {
    auto route = ParseRoute((**keys)[i], absl::StrCat("keys[", i, "]"));
    if (!route.ok()) return route.status();
    routes.push_back(*std::move(route));
  }
  return routes;
}

absl::StatusOr<CallerFacts> ParseCallerFacts(const nlohmann::json& body) {
  if (!body.is_object()) return Malformed("me", "must be a JSON object");
  CallerFacts caller;
  auto id = RequiredString(body, "id", "me", /*allow_empty=*/false);
  if (!id.ok()) return id.status();
  caller.user_id = *std::move(id);
  if (!body.contains("orgs")) return caller;
  auto orgs = base::RequiredArray(body, "orgs");
  if (!orgs.ok()) return At("me", orgs.status());
  for (size_t i = 0; i < (*orgs)->size(); ++i) {
    const nlohmann::json& org = (**orgs)[i];
    const std::string where = absl::StrCat("me.orgs[", i, "]");
    if (!org.is_object()) return Malformed(where, "must be an object");
    auto org_id = RequiredString(org, "id", where, /*allow_empty=*/false);
    if (!org_id.ok()) return org_id.status();
    auto role = RequiredString(org, "role", where);
    if (!role.ok()) return role.status();
    // An unknown role is refused rather than read as membership (fail closed).
    if (*role != "admin" && *role != "member" && *role != "viewer") {
      return Malformed(where + ".role", "must be admin, member or viewer");
    }
    if (!caller.org_roles.emplace(*org_id, *role).second) {
      return Malformed(where + ".id", "repeats an org");
    }
  }
  return caller;
}

}  // namespace aevatar::orchestrator
