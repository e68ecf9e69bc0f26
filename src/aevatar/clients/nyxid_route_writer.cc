#include "aevatar/clients/nyxid_route_writer.h"

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::orchestrator {
namespace {

// Maps a failed NyxID read to a typed error; never includes NyxID's body.
absl::Status ReadFailure(const NyxidReply& reply) {
  if (reply.status == 401) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, "NYXID_CREDENTIAL_REJECTED",
                          "NyxID rejected the caller's credential", 401);
  }
  if (reply.status == 403) {
    return base::ApiError(absl::StatusCode::kPermissionDenied, "NYXID_ACCESS_DENIED",
                          "NyxID denied the inventory read", 403);
  }
  return base::ApiError(absl::StatusCode::kUnavailable, "NYXID_UNAVAILABLE",
                        "NyxID could not be read; retry later", 503);
}

// The reply's facts digest when it is one (64 lowercase hex digits), else "".
std::string FactsDigestOf(const NyxidReply& reply) {
  const std::string digest = reply.headers.Get(kFactsDigestHeader).value_or("");
  const bool hex =
      digest.size() == 64 && digest.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? digest : "";
}

NyxidWriteResult ToWriteResult(const NyxidReply& reply) { return {reply.status, reply.body}; }

}  // namespace

absl::StatusOr<CallerFacts> ReadCallerFacts(const NyxidClient& nyxid, const std::string& credential,
                                            std::string* served_body) {
  NyxidReply reply = nyxid.GetMe(credential);
  if (reply.status != 200) return ReadFailure(reply);
  if (served_body != nullptr) *served_body = reply.raw_body;
  auto facts = ParseCallerFacts(reply.body);
  if (!facts.ok()) return NyxidResponseInvalid("identity", facts.status());
  return facts;
}

absl::StatusOr<std::vector<RouteFacts>> ReadInventory(const NyxidClient& nyxid,
                                                      const std::string& credential,
                                                      InventoryEvidence* evidence) {
  NyxidReply reply = nyxid.GetKeys(credential);
  if (reply.status != 200) return ReadFailure(reply);
  if (evidence != nullptr) *evidence = {FactsDigestOf(reply), reply.raw_body};
  auto inventory = ParseKeysInventory(reply.body);
  if (!inventory.ok()) return NyxidResponseInvalid("inventory", inventory.status());
  return inventory;
}

absl::StatusOr<std::vector<RouteFacts>> NyxidRouteWriter::ReadInventory() {
  return orchestrator::ReadInventory(*nyxid_, credential_, &last_evidence_);
}

std::string ConfirmedFactsDigest(const std::string& me_body, const InventoryEvidence& evidence) {
  if (evidence.facts_digest.empty()) return "";
  const std::string recomputed = base::Sha256Hex(me_body + "\n" + evidence.body);
  return recomputed == evidence.facts_digest ? evidence.facts_digest : "";
}

NyxidWriteResult NyxidRouteWriter::PatchUserService(const std::string& id,
                                                    const nlohmann::json& patch) {
  return ToWriteResult(nyxid_->PutUserService(credential_, id, patch));
}

NyxidWriteResult NyxidRouteWriter::CreateUserService(const nlohmann::json& body) {
  return ToWriteResult(nyxid_->PostUserService(credential_, body));
}

}  // namespace aevatar::orchestrator
