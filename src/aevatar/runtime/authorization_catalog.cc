#include "aevatar/runtime/authorization_catalog.h"

#include "absl/strings/ascii.h"
#include "aevatar/routes/route_resolution.h"
#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kCapability[] = "code_execute";

const RouteFacts* Find(const NyxidFacts& facts, const std::string& user_service_id) {
  for (const RouteFacts& route : facts.inventory) {
    if (route.id == user_service_id) return &route;
  }
  return nullptr;
}

// The route a grant names, or nullopt for an entry of another shape.
std::optional<AdmittedRoute> GrantedRoute(const json& grant) {
  auto capability = base::RequiredString(grant, "capability");
  auto id = base::RequiredString(grant, "user_service_id");
  auto catalog_id = base::RequiredString(grant, "catalog_service_id");
  if (!capability.ok() || *capability != kCapability || !id.ok() || !catalog_id.ok()) {
    return std::nullopt;
  }
  return AdmittedRoute{*id, "", *catalog_id};
}

bool IsRevoked(const json& grant) {
  return grant.is_object() && grant.contains("revoked") && grant["revoked"].is_object();
}

void Revoke(json& grant, const std::string& code, const std::string& source, int64_t now_ms) {
  grant["revoked"] = {{"code", code}, {"source", source}, {"at_ms", now_ms}};
}

}  // namespace

std::string GrantVerdict(const NyxidFacts& facts, const AdmittedRoute& route) {
  const RouteFacts* found = Find(facts, route.user_service_id);
  if (found == nullptr || found->catalog_service_id.value_or("") != route.catalog_service_id) {
    return "code_execution_route_missing";
  }
  if (!IsAccessibleTo(*found, facts.caller)) return "code_execution_route_access_denied";
  if (!found->active) return "code_execution_route_inactive";
  if (GapsOf(*found).any()) return "code_execution_route_policy_mismatch";
  return "";
}

absl::StatusOr<json> CatalogFromFacts(const NyxidFacts& facts, const AdmittedRoute& route,
                                      int64_t now_ms) {
  if (std::string verdict = GrantVerdict(facts, route); !verdict.empty()) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, absl::AsciiStrToUpper(verdict),
                          "NyxID's facts do not grant the admitted route");
  }
  return json{{"version", 1},
              {"grants",
               {{{"capability", kCapability},
                 {"user_service_id", route.user_service_id},
                 {"catalog_service_id", route.catalog_service_id},
                 {"granted_at_ms", now_ms},
                 {"revoked", nullptr}}}}};
}

int ApplyFacts(json& catalog, const NyxidFacts& facts, const std::string& source, int64_t now_ms) {
  if (!catalog.is_object() || !catalog.contains("grants") || !catalog["grants"].is_array()) {
    return 0;
  }
  int revoked = 0;
  for (json& grant : catalog["grants"]) {
    if (IsRevoked(grant)) continue;
    auto route = GrantedRoute(grant);
    if (!route) continue;
    // Facts about other routes say nothing about this grant; only the
    // caller's own view of this exact route counts.
    if (std::string verdict = GrantVerdict(facts, *route); !verdict.empty()) {
      Revoke(grant, verdict, source, now_ms);
      ++revoked;
    }
  }
  return revoked;
}

bool RevokeGrant(json& catalog, const std::string& user_service_id, const std::string& code,
                 const std::string& source, int64_t now_ms) {
  if (!catalog.is_object() || !catalog.contains("grants") || !catalog["grants"].is_array()) {
    return false;
  }
  bool changed = false;
  for (json& grant : catalog["grants"]) {
    auto route = GrantedRoute(grant);
    if (!route || route->user_service_id != user_service_id || IsRevoked(grant)) continue;
    Revoke(grant, code, source, now_ms);
    changed = true;
  }
  return changed;
}

std::string CheckGrant(const json& catalog, const AdmittedRoute& route) {
  auto grants = base::RequiredArray(catalog, "grants");
  if (!grants.ok()) return kGrantMissingCode;
  for (const json& grant : **grants) {
    auto granted = GrantedRoute(grant);
    if (!granted || granted->user_service_id != route.user_service_id ||
        granted->catalog_service_id != route.catalog_service_id) {
      continue;
    }
    if (!IsRevoked(grant)) return "";
    return base::StringOr(grant["revoked"], "code", kGrantMissingCode);
  }
  return kGrantMissingCode;
}

}  // namespace aevatar::orchestrator
