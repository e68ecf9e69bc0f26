#include "nyxid/routes/caller_facts.h"

#include "base/api_error.h"
#include "base/crypto.h"
#include "nyxid/routes/facts_digest_cache.h"

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

namespace {

absl::StatusOr<std::optional<FactsClaim>> ClaimAtCurrentGeneration(const HttpApiDeps& deps,
                                                                   std::string digest) {
  auto generation = deps.store->FactsGeneration();
  if (!generation.ok()) return generation.status();
  return FactsClaim{std::move(digest), *generation};
}

}  // namespace

std::optional<FactsClaim> ReadFactsClaim(const http::Request& request, int64_t generation) {
  std::optional<std::string> digest = request.headers.Get(kFactsDigestHeader);
  if (!digest) return std::nullopt;
  return FactsClaim{*std::move(digest), generation};
}

absl::StatusOr<std::optional<FactsClaim>> ReadRevalidation(const HttpApiDeps& deps,
                                                           const http::Request& request) {
  const std::optional<std::string> tag = request.headers.Get("If-None-Match");
  if (!tag || tag->size() < 2 || tag->front() != '"' || tag->back() != '"') return std::nullopt;
  std::string digest = tag->substr(1, tag->size() - 2);
  if (digest.find('"') != std::string::npos) return std::nullopt;  // a list of tags
  return ClaimAtCurrentGeneration(deps, std::move(digest));
}

std::string FactsEntityTag(const std::string& digest) { return "\"" + digest + "\""; }

absl::StatusOr<bool> FactsStillHold(const HttpApiDeps& deps, const Principal& caller,
                                    const std::optional<FactsClaim>& claim) {
  if (!claim) return true;
  const std::string key = FactsKeyOf(caller);
  std::optional<std::string> current = deps.facts_digests->Find(key, claim->generation);
  if (!current) {
    auto computed = CallerFactsDigest(deps, caller);
    if (!computed.ok()) return computed.status();
    deps.facts_digests->Remember(key, claim->generation, *computed);
    current = *std::move(computed);
  }
  return base::ConstantTimeEquals(claim->digest, *current);
}

absl::Status FactsChanged() {
  return base::ApiError(absl::StatusCode::kFailedPrecondition, "NYXID_FACTS_CHANGED",
                        "the caller's identity or routes changed since the admission this "
                        "request was made on; admit again",
                        412);
}

}  // namespace aevatar::nyxid
