// Claim checks for verified tokens: VerifyClaims and ParseScopes (see jws.h).

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/jws.h"
#include "base/jws_internal.h"

namespace aevatar::base {
namespace {

using jws_internal::MalformedToken;
using jws_internal::TokenError;

// Reads the NumericDate claim `name` (RFC 7519 §2: seconds, possibly
// fractional). Returns nullopt when absent; non-numbers are malformed.
// Values are clamped to int64 so the comparisons below cannot overflow.
absl::StatusOr<std::optional<int64_t>> NumericDate(const nlohmann::json& claims,
                                                   const std::string& name) {
  const auto it = claims.find(name);
  if (it == claims.end()) return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
  constexpr int64_t kMin = -kMax;
  if (it->is_number_unsigned()) {
    return static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), kMax));
  }
  if (it->is_number_integer()) return std::clamp(it->get<int64_t>(), kMin, kMax);
  if (it->is_number_float()) {
    const double value = it->get<double>();
    if (!std::isfinite(value))
      return MalformedToken(absl::StrCat("the ", name, " claim is not finite"));
    const double clamped =
        std::clamp(std::floor(value), static_cast<double>(kMin), static_cast<double>(kMax));
    return static_cast<int64_t>(clamped);
  }
  return MalformedToken(absl::StrCat("the ", name, " claim is not a number"));
}

// True when `aud` (a string, or an array of strings) names `audience`.
absl::StatusOr<bool> AudienceMatches(const nlohmann::json& aud, const std::string& audience) {
  if (aud.is_string()) return aud.get<std::string>() == audience;
  if (!aud.is_array()) return MalformedToken("the aud claim is not a string or an array");
  bool found = false;
  for (const nlohmann::json& entry : aud) {
    if (!entry.is_string()) return MalformedToken("the aud claim holds a non-string");
    found = found || entry.get<std::string>() == audience;
  }
  return found;
}

}  // namespace

absl::Status VerifyClaims(const nlohmann::json& claims, const ClaimRequirements& requirements) {
  if (!claims.is_object()) return MalformedToken("the token claims are not a JSON object");
  const int64_t now = requirements.now_unix;
  const int64_t leeway = std::clamp<int64_t>(requirements.leeway_secs, 0, 24 * 3600);

  absl::StatusOr<std::optional<int64_t>> exp = NumericDate(claims, "exp");
  if (!exp.ok()) return exp.status();
  // A token without an expiry would be a bearer credential forever.
  if (!exp->has_value()) return MalformedToken("the token has no exp claim");
  // RFC 7519 §4.1.4: reject on or after exp.
  if (now - leeway >= **exp) {
    return TokenError("TOKEN_EXPIRED", "the token has expired");
  }

  absl::StatusOr<std::optional<int64_t>> nbf = NumericDate(claims, "nbf");
  if (!nbf.ok()) return nbf.status();
  if (nbf->has_value() && now + leeway < **nbf) {
    return TokenError("TOKEN_NOT_YET_VALID", "the token is not valid yet");
  }
  absl::StatusOr<std::optional<int64_t>> iat = NumericDate(claims, "iat");
  if (!iat.ok()) return iat.status();
  if (iat->has_value() && now + leeway < **iat) {
    return TokenError("TOKEN_NOT_YET_VALID", "the token was issued in the future");
  }

  // Fail closed: an empty requirement matches no token rather than every token.
  const auto aud = claims.find("aud");
  if (aud == claims.end() || requirements.audience.empty()) {
    return TokenError("TOKEN_AUDIENCE_MISMATCH", "the token is not meant for this service");
  }
  absl::StatusOr<bool> aud_ok = AudienceMatches(*aud, requirements.audience);
  if (!aud_ok.ok()) return aud_ok.status();
  if (!*aud_ok) {
    return TokenError("TOKEN_AUDIENCE_MISMATCH", "the token is not meant for this service");
  }

  const auto kind = claims.find("token_kind");
  if (kind == claims.end() || !kind->is_string() || requirements.token_kind.empty() ||
      kind->get<std::string>() != requirements.token_kind) {
    return TokenError("TOKEN_KIND_MISMATCH",
                      absl::StrCat("a ", requirements.token_kind, " token is required"));
  }

  if (requirements.required_scopes.empty()) return absl::OkStatus();
  const auto scope = claims.find("scope");
  if (scope != claims.end() && !scope->is_string()) {
    return MalformedToken("the scope claim is not a string");
  }
  const std::vector<std::string> granted =
      scope == claims.end() ? std::vector<std::string>{} : ParseScopes(scope->get<std::string>());
  for (const std::string& required : requirements.required_scopes) {
    if (!std::binary_search(granted.begin(), granted.end(), required)) {
      // The scope names come from our own requirements, not the token.
      return ApiError(absl::StatusCode::kPermissionDenied, "TOKEN_SCOPE_MISSING",
                      absl::StrCat("the token lacks the scope ", required), 403);
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> ParseScopes(std::string_view scope) {
  // RFC 6749 §3.3: scope tokens are separated by single spaces; tolerate runs
  // of spaces, and treat the result as a set (sorted, unique).
  std::vector<std::string> scopes;
  size_t start = 0;
  while (start <= scope.size()) {
    size_t end = scope.find(' ', start);
    if (end == std::string_view::npos) end = scope.size();
    if (end > start) scopes.emplace_back(scope.substr(start, end - start));
    start = end + 1;
  }
  std::sort(scopes.begin(), scopes.end());
  scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
  return scopes;
}

}  // namespace aevatar::base
