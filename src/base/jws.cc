#include "base/jws.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/json_read.h"
#include "base/jws_internal.h"
#include "base/verified_tokens.h"

// Theory of operation: verifying a compact JWS.
//
//   token = B64(header) "." B64(claims) "." B64(signature)
//
// VerifyJws works from the cheapest, least trusting checks to the key:
//   1. size cap and exactly three segments                  -> TOKEN_MALFORMED
//   2. header decodes to a JSON object without duplicate keys -> TOKEN_MALFORMED
//   3. alg is exactly "EdDSA"                     -> TOKEN_ALGORITHM_REJECTED
//      (before any key is looked up, so no key ever meets another algorithm)
//   4. no "crit", a non-empty kid, signature and claims segments decode
//                                                           -> TOKEN_MALFORMED
//      (all before the lookup: garbage must not trigger a JWKS refresh)
//   5. the kid resolves through the KeyLookup              -> TOKEN_KEY_UNKNOWN
//   6. Ed25519 over the ASCII bytes B64(header) "." B64(claims)
//                                                  -> TOKEN_SIGNATURE_INVALID
//   7. only then are the (now authenticated) claims parsed -> TOKEN_MALFORMED
// Claims (exp, aud, scopes, …) are checked separately by VerifyClaims.
// A token that passed 2–7 is remembered (VerifiedTokens): presented again,
// with its kid still resolving to the same key, it skips 2–7 and returns
// what they produced then.
namespace aevatar::base {
namespace jws_internal {

std::optional<nlohmann::json> ParseStrictObject(std::string_view text) {
  absl::StatusOr<nlohmann::json> doc = ParseStrictJsonObject(text);
  if (!doc.ok()) return std::nullopt;
  return *std::move(doc);
}

absl::Status TokenError(std::string api_code, std::string detail) {
  return ApiError(absl::StatusCode::kUnauthenticated, std::move(api_code), std::move(detail), 401);
}

absl::Status MalformedToken(std::string detail) {
  return TokenError("TOKEN_MALFORMED", std::move(detail));
}

}  // namespace jws_internal

namespace {

using jws_internal::MalformedToken;
using jws_internal::ParseStrictObject;
using jws_internal::TokenError;

// Far above any token this system issues; bounds the work an anonymous
// caller can make us do before the signature is checked.
constexpr size_t kMaxTokenBytes = 16 * 1024;
constexpr char kAlg[] = "EdDSA";
constexpr size_t kSignatureBytes = 64;

}  // namespace

std::string SignJws(const nlohmann::json& claims, std::string_view kid,
                    std::string_view secret_key) {
  const nlohmann::json header = {{"alg", kAlg}, {"typ", "JWT"}, {"kid", std::string(kid)}};
  // `replace` instead of throwing on invalid UTF-8: what is signed is exactly
  // what the token carries, so the result is still self-consistent.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  std::string signing_input = Base64UrlEncode(header.dump(-1, ' ', false, kReplace));
  signing_input += '.';
  signing_input += Base64UrlEncode(claims.dump(-1, ' ', false, kReplace));
  const std::string signature = Ed25519Sign(secret_key, signing_input);
  return signing_input + "." + Base64UrlEncode(signature);
}

namespace {

// Steps 2–7 of the theory above, for a token already split at its dots.
// Fills `verified` (all but its digest) on success.
absl::Status VerifyUncached(std::string_view token, size_t first_dot, size_t second_dot,
                            const KeyLookup& lookup, VerifiedTokens::Entry& verified) {
  const std::string_view header_b64 = token.substr(0, first_dot);
  const std::string_view claims_b64 = token.substr(first_dot + 1, second_dot - first_dot - 1);
  const std::string_view signature_b64 = token.substr(second_dot + 1);

  absl::StatusOr<std::string> header_json = Base64UrlDecode(header_b64);
  if (!header_json.ok()) return MalformedToken("the token header is not base64url");
  std::optional<nlohmann::json> header = ParseStrictObject(*header_json);
  if (!header) return MalformedToken("the token header is not a JSON object");

  const auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string() || alg->get<std::string>() != kAlg) {
    return TokenError("TOKEN_ALGORITHM_REJECTED", "only EdDSA-signed tokens are accepted");
  }
  // We implement no JWS extensions, so any critical one must be refused (RFC 7515 §4.1.11).
  if (header->contains("crit")) return MalformedToken("the token names critical header extensions");
  const auto kid = header->find("kid");
  if (kid == header->end() || !kid->is_string() || kid->get<std::string>().empty()) {
    return MalformedToken("the token header has no kid");
  }

  absl::StatusOr<std::string> signature = Base64UrlDecode(signature_b64);
  if (!signature.ok() || signature->size() != kSignatureBytes) {
    return MalformedToken("the token signature is not a base64url Ed25519 signature");
  }
  absl::StatusOr<std::string> claims_json = Base64UrlDecode(claims_b64);
  if (!claims_json.ok()) return MalformedToken("the token claims are not base64url");

  if (!lookup) return absl::InternalError("VerifyJws called without a key lookup");
  absl::StatusOr<Jwk> key = lookup(kid->get<std::string>());
  if (!key.ok()) {
    if (absl::IsNotFound(key.status())) {
      return TokenError("TOKEN_KEY_UNKNOWN", "the token is signed by an unknown key");
    }
    return key.status();
  }

  const std::string_view signing_input = token.substr(0, second_dot);
  if (!Ed25519Verify(key->public_key, signing_input, *signature)) {
    return TokenError("TOKEN_SIGNATURE_INVALID", "the token signature does not verify");
  }

  std::optional<nlohmann::json> claims = ParseStrictObject(*claims_json);
  if (!claims) return MalformedToken("the token claims are not a JSON object");
  verified.kid = kid->get<std::string>();
  verified.public_key = std::move(key->public_key);
  verified.header = std::move(*header);
  verified.claims = std::move(*claims);
  return absl::OkStatus();
}

// The remembered verification of exactly these token bytes, if the key its
// kid resolves to now is still the key that verified them.
std::shared_ptr<const VerifiedTokens::Entry> StillVerified(const VerifiedTokens& remembered,
                                                           const VerifiedTokens::Digest& digest,
                                                           const KeyLookup& lookup) {
  std::shared_ptr<const VerifiedTokens::Entry> entry = remembered.Find(digest);
  if (entry == nullptr || !lookup) return nullptr;
  absl::StatusOr<Jwk> key = lookup(entry->kid);
  if (!key.ok() || key->public_key != entry->public_key) return nullptr;
  return entry;
}

}  // namespace

absl::StatusOr<VerifiedJws> jws_internal::VerifyJwsRemembering(std::string_view token,
                                                               const KeyLookup& lookup,
                                                               VerifiedTokens& remembered) {
  if (token.size() > kMaxTokenBytes) return MalformedToken("the token is too large");
  const size_t first_dot = token.find('.');
  const size_t second_dot =
      first_dot == std::string_view::npos ? first_dot : token.find('.', first_dot + 1);
  if (second_dot == std::string_view::npos ||
      token.find('.', second_dot + 1) != std::string_view::npos) {
    return MalformedToken("the token must have exactly three segments");
  }

  const VerifiedTokens::Digest digest = VerifiedTokens::DigestOf(token);
  if (auto entry = StillVerified(remembered, digest, lookup)) {
    return VerifiedJws{entry->header, entry->claims};
  }
  auto verified = std::make_shared<VerifiedTokens::Entry>();
  if (absl::Status st = VerifyUncached(token, first_dot, second_dot, lookup, *verified); !st.ok()) {
    return st;
  }
  verified->digest = digest;
  VerifiedJws result{verified->header, verified->claims};
  remembered.Remember(std::move(verified));
  return result;
}

absl::StatusOr<VerifiedJws> VerifyJws(std::string_view token, const KeyLookup& lookup) {
  static VerifiedTokens* const remembered = new VerifiedTokens();
  return jws_internal::VerifyJwsRemembering(token, lookup, *remembered);
}

}  // namespace aevatar::base
