#include "aevatar/admission/admission_proof.h"

#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kLegacyProofVersionV4[] = "external-capability-admission.v4";

std::string ContractDigest() {
  // The code_execute route contract (sandbox-execution.md, "Accepted execution credentials").
  const nlohmann::json contract = {{"forward_access_token", true},
                                   {"inject_delegation_token", true},
                                   {"required_scopes", {"proxy:*", "sandbox:execute"}}};
  return "sha256:" + base::Sha256Hex(contract.dump());
}

absl::Status Invalid(const char* detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "ADMISSION_PROOF_INVALID", detail);
}

}  // namespace

nlohmann::json MakeAdmissionProof(const AdmittedRoute& route, int64_t now_ms) {
  return {{"version", kAdmissionProofVersion},
          {"capability", "code_execute"},
          {"user_service_id", route.user_service_id},
          {"slug", route.slug},
          {"catalog_service_id", route.catalog_service_id},
          {"contract_digest", ContractDigest()},
          {"admitted_at_ms", now_ms}};
}

absl::StatusOr<AdmittedRoute> SealedRoute(const nlohmann::json& proof) {
  if (!proof.is_object()) return Invalid("no admission proof");
  const std::string version = base::StringOr(proof, "version", "");
  if (version == "external-capability-admission.v5") {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "ADMISSION_PROOF_REBIND_REQUIRED",
                          "v5 admission proofs must be re-bound");
  }
  if (version != kAdmissionProofVersion) return Invalid("not a v6 admission proof");
  if (base::StringOr(proof, "capability", "") != "code_execute") {
    return Invalid("not a code_execute proof");
  }
  if (base::StringOr(proof, "contract_digest", "") != ContractDigest()) {
    return Invalid("the proof was made under another credential contract");
  }
  AdmittedRoute route{base::StringOr(proof, "user_service_id", ""),
                      base::StringOr(proof, "slug", ""),
                      base::StringOr(proof, "catalog_service_id", "")};
  if (route.user_service_id.empty() || route.slug.empty() || route.catalog_service_id.empty()) {
    return Invalid("the proof does not seal an exact route");
  }
  return route;
}

absl::StatusOr<PlanStart> StartRuleForSavedPlan(const nlohmann::json& saved_proof,
                                                CredentialKind caller_kind) {
  const bool no_proof =
      saved_proof.is_null() || (saved_proof.is_object() && !saved_proof.contains("version"));
  const bool v4 = saved_proof.is_object() &&
                  base::StringOr(saved_proof, "version", "") == kLegacyProofVersionV4;
  if (no_proof || v4) {
    if (caller_kind == CredentialKind::kHumanBearer) return PlanStart::kInteractiveResolution;
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "ADMISSION_PROOF_REQUIRED",
                          "this caller can run only workflows bound with a v6 admission proof; "
                          "bind the workflow first");
  }
  auto sealed = SealedRoute(saved_proof);
  if (!sealed.ok()) return sealed.status();
  return PlanStart::kExactProof;
}

}  // namespace aevatar::orchestrator
