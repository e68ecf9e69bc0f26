#ifndef AEVATAR_BASE_JWS_INTERNAL_H_
#define AEVATAR_BASE_JWS_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/jws.h"
#include "base/verified_tokens.h"
#include "nlohmann/json.hpp"

// Helpers shared by jws.cc, jws_claims.cc and jwks.cc. Not part of the API.
namespace aevatar::base::jws_internal {

// Parses `text` as a JSON object without throwing (base::ParseStrictJsonObject).
// Returns nullopt when the text is not valid JSON, nests too deeply, is not an
// object, or any object in it repeats a key: parsers disagree on which
// duplicate wins, so a header such as {"alg":"none","alg":"EdDSA"} must not
// mean different things to different services.
std::optional<nlohmann::json> ParseStrictObject(std::string_view text);

// An Unauthenticated (401) token error with the typed `api_code`. `detail`
// must not contain the token, a kid or key material.
absl::Status TokenError(std::string api_code, std::string detail);

// TokenError("TOKEN_MALFORMED", detail).
absl::Status MalformedToken(std::string detail);

// VerifyJws with `remembered` as its table of verified tokens; VerifyJws
// passes one process-wide table. Tests pass their own to watch it.
absl::StatusOr<VerifiedJws> VerifyJwsRemembering(std::string_view token, const KeyLookup& lookup,
                                                 VerifiedTokens& remembered);

}  // namespace aevatar::base::jws_internal

#endif  // AEVATAR_BASE_JWS_INTERNAL_H_
