#ifndef AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_
#define AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_

#include <string>

#include "aevatar/clients/nyxid_client.h"
#include "aevatar/routes/route_convergence.h"

namespace aevatar::orchestrator {

// RouteWriter over NyxID's HTTP API with one caller's credential bound in.
// Lives for one request (it holds the credential).
class NyxidRouteWriter : public RouteWriter {
 public:
  NyxidRouteWriter(const NyxidClient* nyxid, std::string credential)
      : nyxid_(nyxid), credential_(std::move(credential)) {}

  absl::StatusOr<std::vector<RouteFacts>> ReadInventory() override;
  NyxidWriteResult PatchUserService(const std::string& id, const nlohmann::json& patch) override;
  NyxidWriteResult CreateUserService(const nlohmann::json& body) override;

  // The facts digest of the last inventory read (ReadInventory's
  // `facts_digest`).
  const std::string& last_facts_digest() const { return last_facts_digest_; }

 private:
  const NyxidClient* nyxid_;
  std::string credential_;
  std::string last_facts_digest_;
};

// Reads the caller's identity and org roles (GET /api/v1/me) and inventory
// (GET /api/v1/keys). Errors: 401/403 from NyxID pass through typed
// (NYXID_CREDENTIAL_REJECTED / NYXID_ACCESS_DENIED); transport or 5xx is
// 503 NYXID_UNAVAILABLE; a 200 whose body breaks the contract is 502
// NYXID_RESPONSE_INVALID naming the field.
absl::StatusOr<CallerFacts> ReadCallerFacts(const NyxidClient& nyxid,
                                            const std::string& credential);
// When `facts_digest` is set, it receives the reply's X-NyxID-Facts-Digest
// ("" when absent or not a SHA-256 hex digest).
absl::StatusOr<std::vector<RouteFacts>> ReadInventory(const NyxidClient& nyxid,
                                                      const std::string& credential,
                                                      std::string* facts_digest = nullptr);

// The header a proxied request carries its admission's facts digest in, and
// the one that marks NyxID's own 412 refusal of a digest that no longer holds.
inline constexpr char kFactsDigestHeader[] = "X-NyxID-Facts-Digest";
inline constexpr char kFactsChangedHeader[] = "X-NyxID-Facts-Changed";

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_CLIENTS_NYXID_ROUTE_WRITER_H_
