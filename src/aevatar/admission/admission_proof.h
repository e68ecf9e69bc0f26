#ifndef AEVATAR_AEVATAR_ADMISSION_ADMISSION_PROOF_H_
#define AEVATAR_AEVATAR_ADMISSION_ADMISSION_PROOF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aevatar/admission/route_admission.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

inline constexpr char kAdmissionProofVersion[] = "external-capability-admission.v6";

// The call-site proof committed by draft-run, save and bind: which exact
// route a workflow's code_execute steps were admitted on.
//   {"version": "external-capability-admission.v6", "capability": "code_execute",
//    "user_service_id": …, "slug": …, "catalog_service_id": …,
//    "contract_digest": "sha256:…", "admitted_at_ms": …}
// The contract digest covers the credential contract (forward_access_token,
// inject_delegation_token, the required scopes), so a proof made under a
// different contract never verifies.
nlohmann::json MakeAdmissionProof(const AdmittedRoute& route, int64_t now_ms);

// The exact route a proof seals. InvalidArgument ADMISSION_PROOF_INVALID for
// anything but a well-formed v6 proof with the current contract digest;
// FailedPrecondition ADMISSION_PROOF_REBIND_REQUIRED for v5.
absl::StatusOr<AdmittedRoute> SealedRoute(const nlohmann::json& proof);

// The actor-owned authorization catalog of a run: the grants it may use.
// Durable invoke requires it to prove the exact service grant of `proof`.
bool CatalogGrants(const nlohmann::json& authorization_catalog, const AdmittedRoute& route);
nlohmann::json CatalogFor(const AdmittedRoute& route);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_ADMISSION_PROOF_H_
