#ifndef AEVATAR_AEVATAR_ADMISSION_ROUTE_ADMISSION_H_
#define AEVATAR_AEVATAR_ADMISSION_ROUTE_ADMISSION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/admission/ingress_auth.h"
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/routes/route_resolution.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {

// The exact chrono-sandbox route a code_execute call was admitted on.
struct AdmittedRoute {
  std::string user_service_id;  // goes to _nyxid_via; never logged
  std::string slug;             // the proxy path segment
  std::string catalog_service_id;
};

// What one source-readable NyxID read reported: the caller (GET /api/v1/me)
// and the routes it sees (GET /api/v1/keys). The authorization catalogs of
// the caller's runs are built from, and revoked by, these facts.
struct NyxidFacts {
  CallerFacts caller;
  std::vector<RouteFacts> inventory;
  // NyxID's digest of both documents (X-NyxID-Facts-Digest) when it is the
  // digest of exactly the two bodies read (ConfirmedFactsDigest); "" when
  // NyxID sent none or something changed between the two reads.
  std::string facts_digest;
};

// Attaches a one-sentence remediation to a typed error (read back by
// RemediationOf and rendered in the problem body).
absl::Status WithRemediation(absl::Status status, const std::string& remediation);
std::string RemediationOf(const absl::Status& status);

// Admits code_execute for `caller` on exactly one route (fail closed):
//  1. on a fresh admission by a caller with write authority, converges the
//     route first (route_convergence.h): a rejected or unverified repair, or
//     a mismatch the caller may not fix, is a typed error;
//  2. reads the caller's identity and inventory from NyxID and resolves the
//     route (route_resolution.h); anything but exactly one eligible route is
//     a typed CODE_EXECUTION_ROUTE_* error.
// Every rejection logs one line holding only `diagnostic_id`, the lowercase
// category (code_execution_route_missing, …) and the candidate counts.
// fresh_admission = false never writes: readiness and the start of a saved
// plan resolve read-only (only draft-run, save and bind converge).
// When `observed` is set and the NyxID read succeeded, it receives the facts
// the decision was made on (also when the route was rejected). When
// `facts_digest` is set, an admitted route's NyxidFacts::facts_digest goes
// there.
absl::StatusOr<AdmittedRoute> AdmitCodeExecutionRoute(
    const NyxidClient& nyxid, const Caller& caller, const std::string& chrono_catalog_id,
    bool fresh_admission, const std::string& diagnostic_id,
    std::optional<NyxidFacts>* observed = nullptr, std::string* facts_digest = nullptr);

// GET /api/capabilities/code_execute/readiness: the same resolution, read-only.
// {"capability": "code_execute", "ready": bool, "code": …, "category": …,
//  "remediation": …, "candidates": {canonical, accessible, active, eligible},
//  "diagnostic_id": …}. `observed` as for AdmitCodeExecutionRoute.
absl::StatusOr<nlohmann::json> CodeExecuteReadiness(const NyxidClient& nyxid, const Caller& caller,
                                                    const std::string& chrono_catalog_id,
                                                    const std::string& diagnostic_id,
                                                    std::optional<NyxidFacts>* observed = nullptr);

// Reads the caller's NyxID facts with its own source-readable credential.
// Errors as ReadCallerFacts/ReadInventory (nyxid_route_writer.h).
absl::StatusOr<NyxidFacts> ReadNyxidFacts(const NyxidClient& nyxid, const std::string& credential);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ADMISSION_ROUTE_ADMISSION_H_
