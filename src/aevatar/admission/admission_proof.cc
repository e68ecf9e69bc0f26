#include "aevatar/admission/admission_proof.h"

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

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
  const std::string version = proof.value("version", "");
  if (version == "external-capability-admission.v5") {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "ADMISSION_PROOF_REBIND_REQUIRED",
                          "v5 admission proofs must be re-bound");
  }
  if (version != kAdmissionProofVersion) return Invalid("not a v6 admission proof");
  if (proof.value("capability", "") != "code_execute") return Invalid("not a code_execute proof");
  if (proof.value("contract_digest", "") != ContractDigest()) {
    return Invalid("the proof was made under another credential contract");
  }
  AdmittedRoute route{proof.value("user_service_id", ""), proof.value("slug", ""),
                      proof.value("catalog_service_id", "")};
  if (route.user_service_id.empty() || route.slug.empty() || route.catalog_service_id.empty()) {
    return Invalid("the proof does not seal an exact route");
  }
  return route;
}

nlohmann::json CatalogFor(const AdmittedRoute& route) {
  return nlohmann::json::array({{{"capability", "code_execute"},
                                 {"user_service_id", route.user_service_id},
                                 {"catalog_service_id", route.catalog_service_id}}});
}

bool CatalogGrants(const nlohmann::json& authorization_catalog, const AdmittedRoute& route) {
  if (!authorization_catalog.is_array()) return false;
  for (const auto& grant : authorization_catalog) {
    if (grant.value("capability", "") == "code_execute" &&
        grant.value("user_service_id", "") == route.user_service_id &&
        grant.value("catalog_service_id", "") == route.catalog_service_id) {
      return true;
    }
  }
  return false;
}

}  // namespace aevatar::orchestrator
