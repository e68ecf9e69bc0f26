#include "nyxid/routes/caller_facts.h"

#include "base/api_error.h"
#include "base/crypto.h"

namespace aevatar::nyxid {

std::string FactsDigestOf(const nlohmann::json& me, const nlohmann::json& keys) {
  return base::Sha256Hex(JsonText(me) + "\n" + JsonText(keys));
}

absl::StatusOr<std::string> CallerFactsDigest(const HttpApiDeps& deps, const Principal& caller) {
  auto me = MeDocument(deps, caller);
  if (!me.ok()) return me.status();
  auto keys = KeysDocument(deps, caller);
  if (!keys.ok()) return keys.status();
  return FactsDigestOf(*me, *keys);
}

absl::StatusOr<bool> FactsStillHold(const HttpApiDeps& deps, const Principal& caller,
                                    const http::Request& request) {
  const std::optional<std::string> claimed = request.headers.Get(kFactsDigestHeader);
  if (!claimed) return true;
  auto current = CallerFactsDigest(deps, caller);
  if (!current.ok()) return current.status();
  return base::ConstantTimeEquals(*claimed, *current);
}

absl::Status FactsChanged() {
  return base::ApiError(absl::StatusCode::kFailedPrecondition, "NYXID_FACTS_CHANGED",
                        "the caller's identity or routes changed since the admission this "
                        "request was made on; admit again",
                        412);
}

}  // namespace aevatar::nyxid
