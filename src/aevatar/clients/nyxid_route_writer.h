#ifndef AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_
#define AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_

#include <string>

#include "aevatar/clients/nyxid_client.h"
#include "aevatar/routes/route_convergence.h"

namespace aevatar::orchestrator {

// What an inventory read answered besides the routes: NyxID's facts digest
// (X-NyxID-Facts-Digest; "" when absent or not a SHA-256 hex digest) and the
// body as served, which the digest covers.
struct InventoryEvidence {
  std::string facts_digest;
  std::string body;
};

// RouteWriter over NyxID's HTTP API with one caller's credential bound in.
// Lives for one request (it holds the credential).
class NyxidRouteWriter : public RouteWriter {
 public:
  NyxidRouteWriter(const NyxidClient* nyxid, std::string credential)
      : nyxid_(nyxid), credential_(std::move(credential)) {}

  absl::StatusOr<std::vector<RouteFacts>> ReadInventory() override;
  NyxidWriteResult PatchUserService(const std::string& id, const nlohmann::json& patch) override;
  NyxidWriteResult CreateUserService(const nlohmann::json& body) override;

  // What the last inventory read answered besides the routes.
  const InventoryEvidence& last_evidence() const { return last_evidence_; }

 private:
  const NyxidClient* nyxid_;
  std::string credential_;
  InventoryEvidence last_evidence_;
};

// Reads the caller's identity and org roles (GET /api/v1/me) and inventory
// (GET /api/v1/keys). Errors: 401/403 from NyxID pass through typed
// (NYXID_CREDENTIAL_REJECTED / NYXID_ACCESS_DENIED); transport or 5xx is
// 503 NYXID_UNAVAILABLE; a 200 whose body breaks the contract is 502
// NYXID_RESPONSE_INVALID naming the field.
// `served_body` / `evidence`, when set, receive what the read answered.
absl::StatusOr<CallerFacts> ReadCallerFacts(const NyxidClient& nyxid, const std::string& credential,
                                            std::string* served_body = nullptr);
absl::StatusOr<std::vector<RouteFacts>> ReadInventory(const NyxidClient& nyxid,
                                                      const std::string& credential,
                                                      InventoryEvidence* evidence = nullptr);

// `evidence`'s digest when it is NyxID's digest of exactly `me_body` and the
// inventory body: the two documents a decision read came from one state of
// NyxID (nothing changed between the reads). "" otherwise.
std::string ConfirmedFactsDigest(const std::string& me_body, const InventoryEvidence& evidence);

// The header a proxied request carries its admission's facts digest in, and
// the one that marks NyxID's own 412 refusal of a digest that no longer holds.
inline constexpr char kFactsDigestHeader[] = "X-NyxID-Facts-Digest";
inline constexpr char kFactsChangedHeader[] = "X-NyxID-Facts-Changed";

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_
