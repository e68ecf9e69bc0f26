#ifndef AEVATAR_AEVATAR_RUNTIME_AUTHORIZATION_CATALOG_H_
#define AEVATAR_AEVATAR_RUNTIME_AUTHORIZATION_CATALOG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/admission/route_admission.h"
#include "nlohmann/json.hpp"

// The actor-owned NyxID authorization catalog (spec: "Durable bind/invoke
// additionally requires the existing actor-owned NyxID authorization catalog
// to prove that exact service grant").
//
// Theory of operation. The catalog is the set of exact service grants a run
// (or a bound workflow) holds, and it is built only from NyxID facts: the
// caller's identity and inventory as NyxID reported them when the route was
// admitted, never from the admission proof it is later checked against. A
// grant holds while the facts say the route exists for the caller, keeps its
// catalog identity, is accessible to the caller (own route, or an org route
// with credential_source.allowed), is active and still satisfies the
// credential contract. Later facts (a runtime re-read, any readiness or
// admission read by the same caller, a NyxID 403) revoke grants that no
// longer hold. A revocation is sticky: a run never regains a grant, even if
// the route comes back. Each step checks the catalog before it makes any
// network call.
//
// Persisted form (actor state; no credential, no secret):
//   {"version": 1, "grants": [{"capability": "code_execute",
//     "user_service_id": …, "catalog_service_id": …, "granted_at_ms": …,
//     "revoked": null | {"code": "code_execution_route_inactive",
//                        "source": "runtime_reread", "at_ms": …}}]}
namespace aevatar::orchestrator {

// Where a revocation was learnt.
inline constexpr char kRevokedByRuntimeReread[] = "runtime_reread";
inline constexpr char kRevokedByObservedFacts[] = "observed_facts";

// The check result when the catalog holds no grant for the route at all.
inline constexpr char kGrantMissingCode[] = "code_execution_admission_proof_invalid";

// Builds a catalog granting `route` from `facts`. FailedPrecondition with the
// spec's category as code (CODE_EXECUTION_ROUTE_INACTIVE, …) when the facts
// do not support the grant.
absl::StatusOr<nlohmann::json> CatalogFromFacts(const NyxidFacts& facts, const AdmittedRoute& route,
                                                int64_t now_ms);

// "" when the facts still support a grant of `route`; else the lowercase
// category that revokes it: code_execution_route_missing (gone, or another
// catalog identity), code_execution_route_access_denied,
// code_execution_route_inactive or code_execution_route_policy_mismatch.
std::string GrantVerdict(const NyxidFacts& facts, const AdmittedRoute& route);

// Revokes every unrevoked grant `facts` no longer support. Returns how many
// grants were revoked (0: the catalog is unchanged).
int ApplyFacts(nlohmann::json& catalog, const NyxidFacts& facts, const std::string& source,
               int64_t now_ms);

// Revokes the grant of `user_service_id` with `code`. Returns whether a
// grant changed.
bool RevokeGrant(nlohmann::json& catalog, const std::string& user_service_id,
                 const std::string& code, const std::string& source, int64_t now_ms);

// "" when `catalog` holds an unrevoked grant of exactly `route`
// (capability, UserService id and catalog identity); the revocation code
// when that grant was revoked; kGrantMissingCode when there is none (or the
// catalog is malformed). Pure: no network.
std::string CheckGrant(const nlohmann::json& catalog, const AdmittedRoute& route);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_RUNTIME_AUTHORIZATION_CATALOG_H_
