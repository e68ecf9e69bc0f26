// Applying a parsed bootstrap file to the store, idempotently.
#include "absl/strings/str_cat.h"
#include "base/crypto.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/bootstrap/bootstrap.h"
#include "nyxid/routes/route_ops.h"

// Each change the file makes is recorded in the admin audit log (actor
// "bootstrap"); applying an unchanged file again records nothing.
namespace aevatar::nyxid {
namespace {

absl::Status PutMembershipAudited(NyxidStore& store, const Membership& membership) {
  auto current = store.MembershipsOfUser(membership.user_id);
  if (!current.ok()) return current.status();
  for (const Membership& held : *current) {
    if (held.org_id == membership.org_id && held.role == membership.role) return absl::OkStatus();
  }
  if (absl::Status st = store.PutMembership(membership); !st.ok()) return st;
  RecordAdminAction(
      store, kBootstrapActor, "membership.set", "org", membership.org_id,
      {{"user_id", membership.user_id}, {"role", std::string(OrgRoleName(membership.role))}});
  return absl::OkStatus();
}

// What an operator changes in a catalog entry (the provider key is compared,
// never recorded).
bool SameCatalogEntry(const CatalogService& a, const CatalogService& b) {
  return a.slug == b.slug && a.name == b.name && a.kind == b.kind && a.base_url == b.base_url &&
         a.default_policy.forward_access_token == b.default_policy.forward_access_token &&
         a.default_policy.inject_delegation_token == b.default_policy.inject_delegation_token &&
         a.default_policy.delegation_token_scope == b.default_policy.delegation_token_scope &&
         a.provider_api_key == b.provider_api_key && a.model_allowlist == b.model_allowlist &&
         a.auto_connect == b.auto_connect && a.delegation_audiences == b.delegation_audiences &&
         a.allow_link_local == b.allow_link_local;
}

absl::Status PutCatalogAudited(NyxidStore& store, const CatalogService& service) {
  auto existing = store.FindCatalogService(service.id);
  if (!existing.ok() && !absl::IsNotFound(existing.status())) return existing.status();
  if (existing.ok() && SameCatalogEntry(*existing, service)) return absl::OkStatus();
  if (absl::Status st = store.PutCatalogService(service); !st.ok()) return st;
  RecordAdminAction(store, kBootstrapActor, existing.ok() ? "catalog.changed" : "catalog.created",
                    "catalog_service", service.id,
                    {{"slug", service.slug},
                     {"kind", std::string(ServiceKindName(service.kind))},
                     {"auto_connect", service.auto_connect}});
  return absl::OkStatus();
}

absl::Status ApplyUser(const BootstrapUser& spec, NyxidStore& store, int64_t now_ms) {
  auto existing = store.FindUserByName(spec.username);
  if (!existing.ok() && !absl::IsNotFound(existing.status())) return existing.status();
  std::string hash = spec.password_hash;
  if (hash.empty()) {
    // A plaintext password is hashed once; a stored hash that still matches
    // it is kept, so restarts do not re-hash.
    if (existing.ok() && base::VerifyPassword(existing->password_hash, *spec.password)) {
      hash = existing->password_hash;
    } else {
      auto hashed = base::HashPassword(*spec.password);
      if (!hashed.ok()) return hashed.status();
      hash = *hashed;
    }
  }
  if (existing.ok()) {
    if (existing->password_hash == hash && existing->platform_admin == spec.platform_admin) {
      return absl::OkStatus();
    }
    const bool password_changed = existing->password_hash != hash;
    existing->password_hash = hash;
    existing->platform_admin = spec.platform_admin;
    if (absl::Status st = store.UpdateUser(*existing); !st.ok()) return st;
    RecordAdminAction(store, kBootstrapActor, "account.changed", "account", existing->id,
                      {{"username", existing->username},
                       {"platform_admin", existing->platform_admin},
                       {"password_changed", password_changed}});
    return absl::OkStatus();
  }
  User user;
  user.id = base::RandomId("usr_");
  user.username = spec.username;
  user.password_hash = hash;
  user.platform_admin = spec.platform_admin;
  user.created_at_ms = now_ms;
  if (absl::Status st = store.InsertUser(user); !st.ok()) return st;
  RecordAdminAction(store, kBootstrapActor, "account.created", "account", user.id,
                    {{"username", user.username}, {"platform_admin", user.platform_admin}});
  return absl::OkStatus();
}

absl::Status ApplyOrg(const BootstrapOrg& spec, NyxidStore& store) {
  auto org = store.FindOrgBySlug(spec.slug);
  if (absl::IsNotFound(org.status())) {
    Org created{base::RandomId("org_"), spec.slug, spec.name};
    if (absl::Status st = store.InsertOrg(created); !st.ok()) return st;
    RecordAdminAction(store, kBootstrapActor, "org.created", "org", created.id,
                      {{"slug", created.slug}});
    org = created;
  }
  if (!org.ok()) return org.status();
  for (const BootstrapMember& member : spec.members) {
    auto user = store.FindUserByName(member.username);
    if (!user.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bootstrap org ", spec.slug, ": unknown member ", member.username));
    }
    if (absl::Status st = PutMembershipAudited(store, {org->id, user->id, member.role}); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyRoute(const BootstrapRoute& spec, NyxidStore& store, int64_t now_ms) {
  Owner owner;
  owner.kind = spec.owner_kind;
  if (spec.owner_kind == OwnerKind::kUser) {
    auto user = store.FindUserByName(spec.owner);
    if (!user.ok()) return absl::InvalidArgumentError("bootstrap user service: unknown owner user");
    owner.id = user->id;
  } else {
    auto org = store.FindOrgBySlug(spec.owner);
    if (!org.ok()) return absl::InvalidArgumentError("bootstrap user service: unknown owner org");
    owner.id = org->id;
  }
  UserService route;
  CredentialPolicy defaults;
  route.slug = spec.slug;
  if (spec.catalog_service_id) {
    auto catalog = store.FindCatalogService(*spec.catalog_service_id);
    if (!catalog.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bootstrap user service: unknown catalog id ", *spec.catalog_service_id));
    }
    defaults = catalog->default_policy;
    if (route.slug.empty()) route.slug = catalog->slug;
    route.catalog_service_id = catalog->id;
  } else {
    route.base_url = spec.base_url;
  }
  auto existing = store.FindUserServiceBySlug(owner, route.slug);
  if (existing.ok()) return absl::OkStatus();  // seeded before; user edits stand
  if (!absl::IsNotFound(existing.status())) return existing.status();
  route.id = base::RandomId("us_");
  route.label = spec.label.empty() ? route.slug : spec.label;
  route.owner = owner;
  route.active = spec.active;
  route.policy.forward_access_token =
      spec.forward_access_token.value_or(defaults.forward_access_token);
  route.policy.inject_delegation_token =
      spec.inject_delegation_token.value_or(defaults.inject_delegation_token);
  route.policy.delegation_token_scope =
      NormalizeScopes(spec.delegation_token_scope.value_or(defaults.delegation_token_scope));
  route.auto_connected = spec.auto_connected;
  route.credential_source_allowed = spec.credential_source_allowed;
  route.node_id = spec.node_id;
  route.created_at_ms = now_ms;
  route.updated_at_ms = now_ms;
  if (absl::Status st = store.InsertUserService(route); !st.ok()) return st;
  RecordAdminAction(store, kBootstrapActor, "route.created", "user_service", route.id,
                    {{"slug", route.slug}, {"active", route.active}});
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyBootstrap(const BootstrapSpec& spec, NyxidStore& store, int64_t now_ms) {
  for (const BootstrapUser& user : spec.users) {
    if (absl::Status st = ApplyUser(user, store, now_ms); !st.ok()) return st;
  }
  for (const BootstrapOrg& org : spec.orgs) {
    if (absl::Status st = ApplyOrg(org, store); !st.ok()) return st;
  }
  for (const CatalogService& service : spec.catalog) {
    if (service.kind == ServiceKind::kLlm && service.provider_api_key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bootstrap catalog ", service.id, ": the provider key was not loaded"));
    }
    if (absl::Status st = PutCatalogAudited(store, service); !st.ok()) return st;
  }
  for (const BootstrapRoute& route : spec.user_services) {
    if (absl::Status st = ApplyRoute(route, store, now_ms); !st.ok()) return st;
  }
  for (const RegisteredClient& client : spec.clients) {
    if (absl::Status st = store.PutClient(client); !st.ok()) return st;
  }
  return EnsureAutoConnectedRoutes(store, now_ms);
}

}  // namespace aevatar::nyxid
