#ifndef AEVATAR_BASE_JWS_H_
#define AEVATAR_BASE_JWS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

// Compact JWS with EdDSA (Ed25519) only, and JWKS documents of OKP keys.
//
// Token format: base64url(header) "." base64url(claims) "." base64url(sig),
// header {"alg":"EdDSA","typ":"JWT","kid":<kid>}. Verification accepts exactly
// alg "EdDSA": "none", HS*, RS* and anything else are rejected before any key
// is looked up, so a key can never be used with another algorithm.
namespace aevatar::base {

// Typed error codes (base::ApiError codes) returned by verification:
//   TOKEN_MALFORMED (401), TOKEN_ALGORITHM_REJECTED (401), TOKEN_KEY_UNKNOWN (401),
//   TOKEN_SIGNATURE_INVALID (401), TOKEN_EXPIRED (401), TOKEN_NOT_YET_VALID (401),
//   TOKEN_AUDIENCE_MISMATCH (401), TOKEN_KIND_MISMATCH (401),
//   TOKEN_SCOPE_MISSING (403).

struct Jwk {
  std::string kid;
  std::string public_key;  // 32 raw bytes
};

// A set of public keys, as published at /.well-known/jwks.json:
//   {"keys":[{"kty":"OKP","crv":"Ed25519","x":<base64url>,"kid":…,"alg":"EdDSA","use":"sig"}]}
class Jwks {
 public:
  // Parses a JWKS document; keys of other types are skipped, a malformed
  // document is InvalidArgument.
  static absl::StatusOr<Jwks> Parse(std::string_view json);
  std::string ToJson() const;
  void Add(Jwk key);
  const Jwk* Find(std::string_view kid) const;
  bool empty() const { return keys_.empty(); }
  const std::vector<Jwk>& keys() const { return keys_; }

 private:
  std::vector<Jwk> keys_;
};

// Signs `claims` with `secret_key` (64-byte Ed25519) under `kid`.
std::string SignJws(const nlohmann::json& claims, std::string_view kid,
                    std::string_view secret_key);

struct VerifiedJws {
  nlohmann::json header;
  nlohmann::json claims;
};

// Resolves a kid to a key; may refresh its source (see JwksCache).
using KeyLookup = std::function<absl::StatusOr<Jwk>(std::string_view kid)>;

// Checks structure, alg == "EdDSA", the kid via `lookup`, and the signature.
// Claims are not checked here (see VerifyClaims).
absl::StatusOr<VerifiedJws> VerifyJws(std::string_view token, const KeyLookup& lookup);

struct ClaimRequirements {
  std::string audience;    // "aud" must equal this (string, or an array containing it)
  std::string token_kind;  // "token_kind" must equal this ("delegation", "access")
  std::vector<std::string> required_scopes;  // each must be in the space-separated "scope"
  int64_t now_unix = 0;                      // seconds
  int64_t leeway_secs = 30;                  // clock skew allowed on exp / nbf / iat
};

// Checks exp (required), nbf and iat (if present), aud, token_kind and scopes.
absl::Status VerifyClaims(const nlohmann::json& claims, const ClaimRequirements& requirements);

// Splits a space-separated scope string into a set (order is not meaning).
std::vector<std::string> ParseScopes(std::string_view scope);

// Caches a JWKS fetched by `fetch` (from a file or a URL), refreshing it when a
// token names an unknown kid (at most once per `min_refresh_secs`, so forged
// kids cannot hammer the source). Thread-safe.
class JwksCache {
 public:
  using Fetcher = std::function<absl::StatusOr<std::string>()>;
  JwksCache(Fetcher fetch, int min_refresh_secs = 10);
  // A KeyLookup backed by this cache; valid while the cache lives.
  KeyLookup AsLookup();
  absl::StatusOr<Jwk> Lookup(std::string_view kid);

 private:
  Fetcher fetch_;
  int min_refresh_secs_;
  absl::Mutex mu_;
  std::optional<Jwks> jwks_ ABSL_GUARDED_BY(mu_);
  int64_t last_fetch_unix_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_JWS_H_
