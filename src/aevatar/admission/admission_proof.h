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

// How a saved plan may be started (spec: "Existing v4 plans did not contain
// code-execution proofs; they remain supported for source-readable
// interactive runtime resolution, but delegation-only and scheduled execution
// require an exact proof. New live admissions write v6 proofs; v5 requires
// rebind."):
//   a valid v6 proof                  -> kExactProof (any caller)
//   no proof, or a v4 proof           -> kInteractiveResolution for a
//                                        HumanBearer (the route is resolved
//                                        read-only at start, never converged);
//                                        FailedPrecondition
//                                        ADMISSION_PROOF_REQUIRED for an Agent
//                                        Key (the credential of scheduled,
//                                        channel and webhook runs) or a
//                                        delegation-only caller
//   a v5 proof                        -> ADMISSION_PROOF_REBIND_REQUIRED
//   anything else                     -> ADMISSION_PROOF_INVALID
enum class PlanStart { kExactProof, kInteractiveResolution };
absl::StatusOr<PlanStart> StartRuleForSavedPlan(const nlohmann::json& saved_proof,
                                                CredentialKind caller_kind);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_ADMISSION_PROOF_H_
