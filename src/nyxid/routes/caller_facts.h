#ifndef AEVATAR_NYXID_ROUTES_CALLER_FACTS_H_
#define AEVATAR_NYXID_ROUTES_CALLER_FACTS_H_

// What a client's route admission reads about its caller (GET /api/v1/me
// and GET /api/v1/keys), and one digest of both. GET /api/v1/keys answers
// with the digest; a proxied request that carries it back is forwarded only
// while it still matches, so a client may reuse an admission decision
// without reading both documents again and never acts on facts that changed.
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "nyxid/api/api_support.h"

namespace aevatar::nyxid {

// On a GET /api/v1/keys reply: the caller's facts digest. On a proxied
// request: the digest the caller's admission was made on.
inline constexpr char kFactsDigestHeader[] = "X-NyxID-Facts-Digest";
// On the 412 NYXID_FACTS_CHANGED the proxy answers (never forwarded): the
// proxy drops every X-NyxID-* field an upstream answers with, so a client
// knows the refusal came from NyxID and the request reached no upstream.
inline constexpr char kFactsChangedHeader[] = "X-NyxID-Facts-Changed";

// GET /api/v1/me's body for `caller` (403 without account read).
absl::StatusOr<nlohmann::json> MeDocument(const HttpApiDeps& deps, const Principal& caller);
// GET /api/v1/keys's body for `caller`.
absl::StatusOr<nlohmann::json> KeysDocument(const HttpApiDeps& deps, const Principal& caller);

// The digest of the two documents: SHA-256 (hex) over the bodies exactly as
// served (JsonText), joined by "\n", so a client can recompute it from the
// two answers it read and tell whether both came from one state of NyxID.
std::string FactsDigestOf(const nlohmann::json& me, const nlohmann::json& keys);

// FactsDigestOf both documents as they would be served to `caller` now.
absl::StatusOr<std::string> CallerFactsDigest(const HttpApiDeps& deps, const Principal& caller);

// A proxied request's claim that the facts its admission was made on still
// hold: the digest it carries, and the facts generation read as it arrived,
// before its caller was authenticated, so that every fact the check reads
// is at least as new as the generation a digest is remembered under
// (facts_digest_cache.h).
struct FactsClaim {
  std::string digest;
  int64_t generation = 0;
};

// The claim `request` makes at `generation`, the facts generation read
// before authenticating the caller; nullopt when it carries no facts digest.
std::optional<FactsClaim> ReadFactsClaim(const http::Request& request, int64_t generation);

// The same for a GET /api/v1/keys that revalidates: `If-None-Match` holding
// exactly one strong entity tag, the digest quoted (what its ETag was).
// nullopt for anything else, which gets the whole answer.
absl::StatusOr<std::optional<FactsClaim>> ReadRevalidation(const HttpApiDeps& deps,
                                                           const http::Request& request);

// The entity tag of a facts digest: the digest in double quotes.
std::string FactsEntityTag(const std::string& digest);

// True when there is no claim or it still matches the caller's facts (the
// digest remembered for the caller at the claim's generation, else computed
// and remembered); an error when they cannot be read.
absl::StatusOr<bool> FactsStillHold(const HttpApiDeps& deps, const Principal& caller,
                                    const std::optional<FactsClaim>& claim);

// The 412 NYXID_FACTS_CHANGED refusal of a request whose facts changed.
absl::Status FactsChanged();

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_ROUTES_CALLER_FACTS_H_
