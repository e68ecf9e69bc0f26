// The route inventory: /keys, /user-services, the catalog and resync.
#include <map>
#include <set>

#include "base/api_error.h"
#include "base/clock.h"
#include "nyxid/api/admin_audit.h"
#include "nyxid/api/api_support.h"
#include "nyxid/routes/caller_facts.h"
#include "nyxid/routes/route_access.h"
#include "nyxid/routes/route_ops.h"

namespace aevatar::nyxid {
namespace {

absl::Status BadField(const std::string& detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "USER_SERVICE_FIELD_INVALID", detail,
                        400);
}

// catalog id -> slug, for rendering.
absl::StatusOr<std::map<std::string, std::string>> ReadCatalogSlugs(NyxidStore& store) {
  auto catalog = store.ListCatalog();
  if (!catalog.ok()) return catalog.status();
  std::map<std::string, std::string> slugs;
  for (const CatalogService& service : *catalog) slugs[service.id] = service.slug;
  return slugs;
}

// The same, with no slugs when the catalog cannot be read.
std::map<std::string, std::string> CatalogSlugs(NyxidStore& store) {
  return ReadCatalogSlugs(store).value_or(std::map<std::string, std::string>());
}

std::string SlugOf(const std::map<std::string, std::string>& slugs, const UserService& route) {
  if (!route.catalog_service_id) return "";
  auto it = slugs.find(*route.catalog_service_id);
  return it == slugs.end() ? "" : it->second;
}

// The routes the caller can see, after the read checks.
absl::StatusOr<std::vector<UserService>> VisibleRoutes(const HttpApiDeps& deps,
                                                       const Principal& caller) {
  if (absl::Status st = RequireAccountRead(caller); !st.ok()) return st;
  auto routes = deps.store->ListUserServices(VisibleOwners(caller));
  if (!routes.ok()) return routes.status();
  std::erase_if(*routes, [&](const UserService& route) { return !CanSee(caller, route); });
  return routes;
}

absl::StatusOr<std::optional<bool>> OptionalBool(const nlohmann::json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end()) return std::optional<bool>();
  if (!it->is_boolean()) return BadField(std::string(name) + " must be a boolean");
  return std::optional<bool>(it->get<bool>());
}

absl::StatusOr<std::optional<std::vector<std::string>>> OptionalScopes(const nlohmann::json& body) {
  auto it = body.find("delegation_token_scope");
  if (it == body.end()) return std::optional<std::vector<std::string>>();
  if (it->is_string()) return std::optional(NormalizeScopes(it->get<std::string>()));
  if (it->is_array()) {
    std::vector<std::string> scopes;
    for (const nlohmann::json& entry : *it) {
      if (!entry.is_string()) return BadField("delegation_token_scope holds a non-string");
      scopes.push_back(entry.get<std::string>());
    }
    return std::optional(NormalizeScopes(scopes));
  }
  return BadField("delegation_token_scope must be a space-separated string or a list");
}

absl::StatusOr<RoutePatch> ParsePatch(const nlohmann::json& body) {
  static const std::set<std::string> kReadOnly = {"id",
                                                  "slug",
                                                  "owner",
                                                  "catalog_service_id",
                                                  "auto_connected",
                                                  "created_at_ms",
                                                  "updated_at_ms",
                                                  "usable",
                                                  "catalog_slug",
                                                  "base_url"};
  static const std::set<std::string> kWritable = {"label",
                                                  "active",
                                                  "forward_access_token",
                                                  "inject_delegation_token",
                                                  "delegation_token_scope",
                                                  "credential_source",
                                                  "node_id"};
  for (const auto& [name, value] : body.items()) {
    if (kReadOnly.count(name) > 0) {
      return base::ApiError(absl::StatusCode::kInvalidArgument, "USER_SERVICE_FIELD_READ_ONLY",
                            name + " cannot be changed", 400);
    }
    if (kWritable.count(name) == 0) return BadField("unknown field " + name);
  }
  RoutePatch patch;
  if (auto it = body.find("label"); it != body.end()) {
    if (!it->is_string()) return BadField("label must be a string");
    patch.label = it->get<std::string>();
  }
  auto active = OptionalBool(body, "active");
  auto forward = OptionalBool(body, "forward_access_token");
  auto inject = OptionalBool(body, "inject_delegation_token");
  auto scopes = OptionalScopes(body);
  for (const absl::Status& st :
       {active.status(), forward.status(), inject.status(), scopes.status()}) {
    if (!st.ok()) return st;
  }
  patch.active = *active;
  patch.forward_access_token = *forward;
  patch.inject_delegation_token = *inject;
  patch.delegation_token_scope = *scopes;
  if (auto it = body.find("credential_source"); it != body.end()) {
    if (!it->is_object()) return BadField("credential_source must be {\"allowed\": bool}");
    auto allowed = OptionalBool(*it, "allowed");
    if (!allowed.ok()) return allowed.status();
    patch.credential_source_allowed = *allowed;
  }
  if (auto it = body.find("node_id"); it != body.end()) {
    if (it->is_null()) {
      patch.node_id = std::optional<std::string>();
    } else if (it->is_string()) {
      patch.node_id = std::optional<std::string>(it->get<std::string>());
    } else {
      return BadField("node_id must be a string or null");
    }
  }
  return patch;
}

absl::StatusOr<CreateRouteRequest> ParseCreate(const nlohmann::json& body) {
  CreateRouteRequest request;
  // Upstreams are the platform operator's (the bootstrap file), never a user's.
  if (body.contains("base_url")) {
    return base::ApiError(absl::StatusCode::kInvalidArgument, "USER_SERVICE_FIELD_READ_ONLY",
                          "base_url is set by the platform operator", 400);
  }
  auto text = [&](const char* name) -> absl::StatusOr<std::optional<std::string>> {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) return std::optional<std::string>();
    if (!it->is_string()) return BadField(std::string(name) + " must be a string");
    return std::optional<std::string>(it->get<std::string>());
  };
  auto catalog_id = text("catalog_service_id");
  auto slug = text("slug");
  auto label = text("label");
  auto node_id = text("node_id");
  auto active = OptionalBool(body, "active");
  auto forward = OptionalBool(body, "forward_access_token");
  auto inject = OptionalBool(body, "inject_delegation_token");
  auto scopes = OptionalScopes(body);
  for (const absl::Status& st :
       {catalog_id.status(), slug.status(), label.status(), node_id.status(), active.status(),
        forward.status(), inject.status(), scopes.status()}) {
    if (!st.ok()) return st;
  }
  request.catalog_service_id = catalog_id->value_or("");
  request.slug = *slug;
  request.label = *label;
  request.node_id = *node_id;
  request.active = *active;
  request.forward_access_token = *forward;
  request.inject_delegation_token = *inject;
  request.delegation_token_scope = *scopes;
  return request;
}

}  // namespace

absl::StatusOr<nlohmann::json> KeysDocument(const HttpApiDeps& deps, const Principal& caller) {
  auto routes = VisibleRoutes(deps, caller);
  if (!routes.ok()) return routes.status();
  // Unlike the other listings, an unreadable catalog is an error here, never
  // missing slugs: the proxy remembers the digest of this document.
  auto read_slugs = ReadCatalogSlugs(*deps.store);
  if (!read_slugs.ok()) return read_slugs.status();
  const auto& slugs = *read_slugs;
  nlohmann::json keys = nlohmann::json::array();
  for (const UserService& route : *routes) {
    keys.push_back(
        UserServiceJson(route, SlugOf(slugs, route), route.auto_connected, CanUse(caller, route)));
  }
  return nlohmann::json{{"keys", keys}};
}

// The inventory, with the digest of it and of GET /api/v1/me that the proxy
// checks a reused admission against (caller_facts.h).
// A revalidation whose digest still holds is 304 with no body: the caller's
// /me and /keys are what it read before.
http::Response HandleKeys(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto revalidation = ReadRevalidation(deps, request);  // before any other read
  if (!revalidation.ok()) return Problem(revalidation.status(), note);
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  // A caller who may not read its facts gets the same error either way.
  if (*revalidation) {
    auto unchanged = FactsStillHold(deps, *caller, *revalidation);
    if (!unchanged.ok()) return Problem(unchanged.status(), note);
    if (*unchanged) {
      http::Response response;
      response.status = 304;
      response.headers.Set("ETag", FactsEntityTag((*revalidation)->digest));
      response.headers.Set(kFactsDigestHeader, (*revalidation)->digest);
      return response;
    }
  }
  auto keys = KeysDocument(deps, *caller);
  if (!keys.ok()) return Problem(keys.status(), note);
  http::Response response = Json(200, *keys);
  // Without a /me document (a store error) there is no digest, and the
  // client cannot reuse an admission.
  auto me = MeDocument(deps, *caller);
  if (me.ok()) {
    const std::string digest = FactsDigestOf(*me, *keys);
    response.headers.Set(kFactsDigestHeader, digest);
    response.headers.Set("ETag", FactsEntityTag(digest));
  }
  return response;
}

http::Response HandleListUserServices(const HttpApiDeps& deps, http::Request& request,
                                      RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  auto routes = VisibleRoutes(deps, *caller);
  if (!routes.ok()) return Problem(routes.status(), note);
  const auto slugs = CatalogSlugs(*deps.store);
  nlohmann::json list = nlohmann::json::array();
  for (const UserService& route : *routes) {
    list.push_back(UserServiceJson(route, SlugOf(slugs, route), std::nullopt, std::nullopt));
  }
  return Json(200, {{"user_services", list}});
}

http::Response HandleGetUserService(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireAccountRead(*caller); !st.ok()) return Problem(st, note);
  auto route = deps.store->FindUserService(request.path_params["id"]);
  absl::Status visible = route.ok() ? CheckVisible(*caller, *route) : route.status();
  if (absl::IsNotFound(visible)) {
    return Problem(base::ApiError(absl::StatusCode::kNotFound, "USER_SERVICE_NOT_FOUND",
                                  "no such user service", 404),
                   note);
  }
  if (!visible.ok()) return Problem(visible, note);
  return Json(200, UserServiceJson(*route, SlugOf(CatalogSlugs(*deps.store), *route), std::nullopt,
                                   std::nullopt));
}

http::Response HandleCreateUserService(const HttpApiDeps& deps, http::Request& request,
                                       RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto create = ParseCreate(*body);
  if (!create.ok()) return Problem(create.status(), note);
  auto route = CreatePersonalRoute(*deps.store, *caller, *create, base::NowUnixMs());
  if (!route.ok()) return Problem(route.status(), note);
  RecordAdminAction(*deps.store, caller->user.id, "route.created", "user_service", route->id,
                    {{"slug", route->slug}, {"active", route->active}});
  return Json(201, UserServiceJson(*route, SlugOf(CatalogSlugs(*deps.store), *route), std::nullopt,
                                   std::nullopt));
}

http::Response HandlePutUserService(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireHumanToken(*caller); !st.ok()) return Problem(st, note);
  const std::string id = request.path_params["id"];
  // Existence and authority first: a catalog id or someone else's route is
  // 404 whatever the body says.
  auto existing = deps.store->FindUserService(id);
  absl::Status writable = existing.ok() ? CheckWritable(*caller, *existing) : existing.status();
  if (absl::IsNotFound(writable)) {
    return Problem(base::ApiError(absl::StatusCode::kNotFound, "USER_SERVICE_NOT_FOUND",
                                  "no such user service", 404),
                   note);
  }
  if (!writable.ok()) return Problem(writable, note);
  auto body = JsonObjectBody(request);
  if (!body.ok()) return Problem(body.status(), note);
  auto patch = ParsePatch(*body);
  if (!patch.ok()) return Problem(patch.status(), note);
  auto route = PatchRoute(*deps.store, *caller, id, *patch, base::NowUnixMs());
  if (!route.ok()) return Problem(route.status(), note);
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& [field, value] : body->items()) fields.push_back(field);
  RecordAdminAction(*deps.store, caller->user.id,
                    existing->active != route->active
                        ? (route->active ? "route.activated" : "route.deactivated")
                        : "route.changed",
                    "user_service", id, {{"fields", fields}, {"active", route->active}});
  return Json(200, UserServiceJson(*route, SlugOf(CatalogSlugs(*deps.store), *route), std::nullopt,
                                   std::nullopt));
}

http::Response HandleResyncIdentity(const HttpApiDeps& deps, http::Request& request,
                                    RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequirePlatformAdmin(*caller, "resync a catalog identity"); !st.ok()) {
    return Problem(st, note);
  }
  const std::string id = request.path_params["id"];
  auto changed = ResyncIdentity(*deps.store, id, base::NowUnixMs());
  if (!changed.ok()) return Problem(changed.status(), note);
  RecordAdminAction(*deps.store, caller->user.id, "catalog.resynced", "catalog_service", id,
                    {{"routes_updated", *changed}});
  return Json(200, {{"catalog_service_id", id}, {"updated", *changed}});
}

http::Response HandleCatalog(const HttpApiDeps& deps, http::Request& request, RequestNote& note) {
  auto caller = Authenticated(deps, request, note);
  if (!caller.ok()) return Problem(caller.status(), note);
  if (absl::Status st = RequireAccountRead(*caller); !st.ok()) return Problem(st, note);
  auto catalog = deps.store->ListCatalog();
  if (!catalog.ok()) return Problem(catalog.status(), note);
  nlohmann::json services = nlohmann::json::array();
  for (const CatalogService& service : *catalog) {
    // The upstream base_url is internal topology and is not shown.
    services.push_back({{"id", service.id},
                        {"slug", service.slug},
                        {"name", service.name},
                        {"kind", ServiceKindName(service.kind)},
                        {"auto_connect", service.auto_connect},
                        {"default_policy", PolicyJson(service.default_policy)}});
  }
  return Json(200, {{"services", services}});
}

}  // namespace aevatar::nyxid
