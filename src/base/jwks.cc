// JWKS documents (Jwks) and the refreshing key cache (JwksCache); see jws.h.

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "base/jws_internal.h"
#include "base/log.h"

namespace aevatar::base {
namespace {

// Generous for a handful of keys; bounds the work a hostile JWKS source can cause.
constexpr size_t kMaxJwksBytes = 1 << 20;
constexpr size_t kEd25519PublicKeyBytes = 32;

absl::Status BadJwks(std::string detail) {
  return absl::InvalidArgumentError(absl::StrCat("invalid JWKS: ", detail));
}

// True when the string member `name` is present and equals `expected`.
bool MemberIs(const nlohmann::json& key, const char* name, const char* expected) {
  const auto it = key.find(name);
  return it != key.end() && it->is_string() && it->get<std::string>() == expected;
}

// True when the optional member `name` is absent or equals `expected`.
bool AbsentOrIs(const nlohmann::json& key, const char* name, const char* expected) {
  return !key.contains(name) || MemberIs(key, name, expected);
}

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<Jwks> Jwks::Parse(std::string_view json) {
  if (json.size() > kMaxJwksBytes) return BadJwks("document too large");
  std::optional<nlohmann::json> doc = jws_internal::ParseStrictObject(json);
  if (!doc) return BadJwks("not a JSON object (or repeats a key)");
  const auto keys = doc->find("keys");
  if (keys == doc->end() || !keys->is_array()) return BadJwks("no \"keys\" array");

  Jwks jwks;
  for (const nlohmann::json& key : *keys) {
    if (!key.is_object()) return BadJwks("a key is not an object");
    // Only Ed25519 signing keys are ours to use; others (RSA, EC, X25519,
    // encryption keys) may legitimately share the document and are skipped.
    if (!MemberIs(key, "kty", "OKP") || !MemberIs(key, "crv", "Ed25519") ||
        !AbsentOrIs(key, "alg", "EdDSA") || !AbsentOrIs(key, "use", "sig")) {
      continue;
    }
    // A published private key means the signer is compromised: refuse the
    // whole document rather than trust anything in it.
    if (key.contains("d")) return BadJwks("a key contains private key material");
    const auto kid = key.find("kid");
    if (kid == key.end() || !kid->is_string() || kid->get<std::string>().empty()) {
      return BadJwks("an Ed25519 key has no kid");
    }
    const auto x = key.find("x");
    if (x == key.end() || !x->is_string()) return BadJwks("an Ed25519 key has no x");
    absl::StatusOr<std::string> public_key = Base64UrlDecode(x->get<std::string>());
    if (!public_key.ok() || public_key->size() != kEd25519PublicKeyBytes) {
      return BadJwks("an Ed25519 key's x is not 32 base64url bytes");
    }
    // Two keys under one kid would make verification depend on order.
    if (jwks.Find(kid->get<std::string>()) != nullptr) return BadJwks("a kid is repeated");
    jwks.keys_.push_back(Jwk{kid->get<std::string>(), std::move(*public_key)});
  }
  return jwks;
}

std::string Jwks::ToJson() const {
  nlohmann::json keys = nlohmann::json::array();
  for (const Jwk& key : keys_) {
    keys.push_back({{"kty", "OKP"},
                    {"crv", "Ed25519"},
                    {"x", Base64UrlEncode(key.public_key)},
                    {"kid", key.kid},
                    {"alg", "EdDSA"},
                    {"use", "sig"}});
  }
  return nlohmann::json{{"keys", std::move(keys)}}.dump(-1, ' ', false,
                                                        nlohmann::json::error_handler_t::replace);
}

void Jwks::Add(Jwk key) {
  // Kids stay unique: adding an existing kid replaces its key.
  for (Jwk& existing : keys_) {
    if (existing.kid == key.kid) {
      existing = std::move(key);
      return;
    }
  }
  keys_.push_back(std::move(key));
}

const Jwk* Jwks::Find(std::string_view kid) const {
  for (const Jwk& key : keys_) {
    if (key.kid == kid) return &key;
  }
  return nullptr;
}

JwksCache::JwksCache(Fetcher fetch, int min_refresh_secs)
    : fetch_(std::move(fetch)), min_refresh_secs_(min_refresh_secs) {}

KeyLookup JwksCache::AsLookup() {
  return [this](std::string_view kid) { return Lookup(kid); };
}

absl::StatusOr<Jwk> JwksCache::Lookup(std::string_view kid) {
  // The fetch runs under mu_ on purpose: concurrent lookups of a new kid wait
  // for the one refresh instead of each being rate-limited into a failure.
  // Refreshes are rare (at most one per min_refresh_secs_), so readers of
  // known kids are blocked only briefly and seldom.
  absl::MutexLock lock(&mu_);
  if (jwks_.has_value()) {
    if (const Jwk* key = jwks_->Find(kid)) return *key;
  }

  const int64_t now = NowUnix();
  // now < last: the wall clock went back; allow a refresh rather than wait
  // for it to catch up.
  const bool may_fetch = last_fetch_unix_ == 0 || now < last_fetch_unix_ ||
                         now - last_fetch_unix_ >= min_refresh_secs_;
  if (may_fetch) {
    // Failed attempts count too, so a dead source is not hammered per request.
    last_fetch_unix_ = now;
    absl::StatusOr<std::string> text = fetch_();
    absl::StatusOr<Jwks> fresh = text.ok() ? Jwks::Parse(*text) : text.status();
    if (fresh.ok()) {
      jwks_ = std::move(*fresh);
      if (const Jwk* key = jwks_->Find(kid)) return *key;
    } else {
      // Keep the last good JWKS; the fetch error names a path or URL, never a key.
      Log(LogLevel::kWarn, "jwks_refresh_failed", "",
          {{"error", std::string(fresh.status().message())}});
    }
  }

  if (!jwks_.has_value()) {
    return ApiError(absl::StatusCode::kUnavailable, "JWKS_UNAVAILABLE",
                    "the token signing keys could not be loaded", 503);
  }
  return ApiError(absl::StatusCode::kUnauthenticated, "TOKEN_KEY_UNKNOWN",
                  "the token is signed by an unknown key", 401);
}

}  // namespace aevatar::base
