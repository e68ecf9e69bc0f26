#include "base/jws.h"

#include <memory>

#include "base/api_error.h"
#include "base/crypto.h"
#include "base/jws_internal.h"
#include "base/verified_tokens.h"
#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'700'000'000;

// Asserts the typed code and HTTP status, and that the detail leaks no token.
void ExpectError(const absl::Status& status, const std::string& api_code, int http,
                 const std::string& token = "") {
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(ApiCode(status), api_code) << status;
  EXPECT_EQ(HttpStatusFor(status), http) << status;
  if (!token.empty()) {
    EXPECT_EQ(std::string(status.message()).find(token), std::string::npos);
  }
}

std::string B64Json(const json& value) { return Base64UrlEncode(value.dump()); }

class JwsTest : public ::testing::Test {
 protected:
  JwsTest() : pair_(GenerateEd25519KeyPair()) { jwks_.Add(Jwk{"k1", pair_.public_key}); }

  KeyLookup Lookup() {
    return [this](std::string_view kid) -> absl::StatusOr<Jwk> {
      ++lookups_;
      if (const Jwk* key = jwks_.Find(kid)) return *key;
      return absl::NotFoundError("no such key");
    };
  }

  static json Claims() {
    return {
        {"iss", "control"},         {"sub", "user_1"}, {"aud", "runner"}, {"token_kind", "access"},
        {"scope", "exec:run read"}, {"iat", kNow},     {"nbf", kNow},     {"exp", kNow + 300}};
  }

  // A token with an arbitrary header, signed by our key over exactly those bytes.
  std::string HandBuilt(const json& header, const json& claims) {
    const std::string input = B64Json(header) + "." + B64Json(claims);
    return input + "." + Base64UrlEncode(Ed25519Sign(pair_.secret_key, input));
  }

  Ed25519KeyPair pair_;
  Jwks jwks_;
  int lookups_ = 0;
};

TEST_F(JwsTest, SignedTokenVerifies) {
  const std::string token = SignJws(Claims(), "k1", pair_.secret_key);
  EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2);
  absl::StatusOr<VerifiedJws> verified = VerifyJws(token, Lookup());
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->header["alg"], "EdDSA");
  EXPECT_EQ(verified->header["typ"], "JWT");
  EXPECT_EQ(verified->header["kid"], "k1");
  EXPECT_EQ(verified->claims, Claims());
}

TEST_F(JwsTest, AlgNoneIsRejectedBeforeKeyLookup) {
  const std::string token =
      B64Json({{"alg", "none"}, {"typ", "JWT"}, {"kid", "k1"}}) + "." + B64Json(Claims()) + ".";
  ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_ALGORITHM_REJECTED", 401, token);
  EXPECT_EQ(lookups_, 0);
}

TEST_F(JwsTest, OtherAlgorithmsAreRejectedBeforeKeyLookup) {
  // HS256 "signed" with the public key as the HMAC secret: the classic
  // key-confusion attack. Any bytes will do; the alg must stop it first.
  for (const json& alg : {json("HS256"), json("ES256"), json("RS256"), json("eddsa"),
                          json("EdDSA "), json(nullptr), json(1)}) {
    const std::string token = B64Json({{"alg", alg}, {"kid", "k1"}}) + "." + B64Json(Claims()) +
                              "." + Base64UrlEncode(Sha256(pair_.public_key));
    ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_ALGORITHM_REJECTED", 401);
  }
  const std::string no_alg = HandBuilt({{"kid", "k1"}}, Claims());
  ExpectError(VerifyJws(no_alg, Lookup()).status(), "TOKEN_ALGORITHM_REJECTED", 401);
  EXPECT_EQ(lookups_, 0);
}

TEST_F(JwsTest, DuplicateHeaderKeysAreMalformed) {
  const std::string header = R"({"alg":"none","alg":"EdDSA","kid":"k1"})";
  const std::string input = Base64UrlEncode(header) + "." + B64Json(Claims());
  const std::string token = input + "." + Base64UrlEncode(Ed25519Sign(pair_.secret_key, input));
  ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_MALFORMED", 401);
}

TEST_F(JwsTest, CriticalHeaderAndMissingKidAreMalformed) {
  ExpectError(
      VerifyJws(HandBuilt({{"alg", "EdDSA"}, {"kid", "k1"}, {"crit", {"b64"}}}, Claims()), Lookup())
          .status(),
      "TOKEN_MALFORMED", 401);
  ExpectError(VerifyJws(HandBuilt({{"alg", "EdDSA"}}, Claims()), Lookup()).status(),
              "TOKEN_MALFORMED", 401);
  ExpectError(VerifyJws(HandBuilt({{"alg", "EdDSA"}, {"kid", ""}}, Claims()), Lookup()).status(),
              "TOKEN_MALFORMED", 401);
}

TEST_F(JwsTest, MalformedStructureIsRejected) {
  const std::string good = SignJws(Claims(), "k1", pair_.secret_key);
  const std::string header = good.substr(0, good.find('.'));
  const std::vector<std::string> bad = {
      "",
      "abc",
      "a.b",
      good + ".x",
      good + ".",
      "!!!." + good.substr(good.find('.') + 1),
      header + "=" + good.substr(good.find('.')),
      Base64UrlEncode("not json") + good.substr(good.find('.')),
      Base64UrlEncode("[1,2]") + good.substr(good.find('.')),
      good.substr(0, good.rfind('.')) + ".AAAA",  // signature of the wrong size
      good.substr(0, good.rfind('.')) + ".A+/A",  // standard alphabet
      std::string(20000, 'a') + "." + good,       // over the size cap
  };
  for (const std::string& token : bad) {
    ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_MALFORMED", 401);
  }
  EXPECT_EQ(lookups_, 0);
  // Authentic but not a JSON object: still malformed, found after the signature.
  const std::string input =
      B64Json({{"alg", "EdDSA"}, {"kid", "k1"}}) + "." + Base64UrlEncode("\"just a string\"");
  const std::string signed_string =
      input + "." + Base64UrlEncode(Ed25519Sign(pair_.secret_key, input));
  ExpectError(VerifyJws(signed_string, Lookup()).status(), "TOKEN_MALFORMED", 401);
}

TEST_F(JwsTest, TamperedClaimsOrSignatureAreRejected) {
  const std::string token = SignJws(Claims(), "k1", pair_.secret_key);
  const size_t first = token.find('.');
  const size_t second = token.rfind('.');
  json elevated = Claims();
  elevated["scope"] = "exec:run read admin";
  const std::string swapped = token.substr(0, first + 1) + B64Json(elevated) + token.substr(second);
  ExpectError(VerifyJws(swapped, Lookup()).status(), "TOKEN_SIGNATURE_INVALID", 401, swapped);

  std::string signature = *Base64UrlDecode(token.substr(second + 1));
  signature[0] ^= 0x01;
  const std::string flipped = token.substr(0, second + 1) + Base64UrlEncode(signature);
  ExpectError(VerifyJws(flipped, Lookup()).status(), "TOKEN_SIGNATURE_INVALID", 401, flipped);
}

TEST_F(JwsTest, UnknownKidOrOtherKeyIsRejected) {
  const std::string unknown = SignJws(Claims(), "k9", pair_.secret_key);
  ExpectError(VerifyJws(unknown, Lookup()).status(), "TOKEN_KEY_UNKNOWN", 401, unknown);
  // Signed by a stranger but naming our kid.
  const std::string forged = SignJws(Claims(), "k1", GenerateEd25519KeyPair().secret_key);
  ExpectError(VerifyJws(forged, Lookup()).status(), "TOKEN_SIGNATURE_INVALID", 401, forged);
}

// Verified tokens are remembered process-wide (verified_tokens.h): what was
// once accepted must not be accepted under another key or with other bytes.
TEST_F(JwsTest, AnAcceptedTokenIsRefusedOnceItsKidNamesAnotherKey) {
  const std::string token = SignJws(Claims(), "k1", pair_.secret_key);
  ASSERT_TRUE(VerifyJws(token, Lookup()).ok());
  std::string signature = *Base64UrlDecode(token.substr(token.rfind('.') + 1));
  signature[5] ^= 0x20;
  const std::string flipped = token.substr(0, token.rfind('.') + 1) + Base64UrlEncode(signature);
  ExpectError(VerifyJws(flipped, Lookup()).status(), "TOKEN_SIGNATURE_INVALID", 401, flipped);

  jwks_ = Jwks();
  jwks_.Add(Jwk{"k1", GenerateEd25519KeyPair().public_key});
  ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_SIGNATURE_INVALID", 401, token);
}

// Verified tokens are remembered too, with their parsed header and claims
// (verified_tokens.h): a hit must still ask for the kid's key each time and
// give back exactly what the first verification parsed.
TEST_F(JwsTest, ARememberedTokenStillResolvesItsKidEveryTime) {
  const std::string token = SignJws(Claims(), "k1", pair_.secret_key);
  for (int presented = 1; presented <= 3; ++presented) {
    absl::StatusOr<VerifiedJws> verified = VerifyJws(token, Lookup());
    ASSERT_TRUE(verified.ok()) << verified.status();
    EXPECT_EQ(verified->header["kid"], "k1");
    EXPECT_EQ(verified->claims, Claims());
    EXPECT_EQ(lookups_, presented);
  }
  jwks_ = Jwks();
  ExpectError(VerifyJws(token, Lookup()).status(), "TOKEN_KEY_UNKNOWN", 401, token);
  jwks_.Add(Jwk{"k1", pair_.public_key});
  EXPECT_TRUE(VerifyJws(token, Lookup()).ok());
}

// The table itself, watched through a private one: a hit is served from it,
// and only while the kid still resolves to the key that verified.
TEST_F(JwsTest, AHitIsServedFromTheTableOnlyWhileTheKidKeepsItsKey) {
  using jws_internal::VerifyJwsRemembering;
  VerifiedTokens remembered;
  const std::string token = SignJws(Claims(), "k1", pair_.secret_key);
  const VerifiedTokens::Digest digest = VerifiedTokens::DigestOf(token);
  ASSERT_TRUE(VerifyJwsRemembering(token, Lookup(), remembered).ok());
  std::shared_ptr<const VerifiedTokens::Entry> entry = remembered.Find(digest);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->kid, "k1");
  EXPECT_EQ(entry->public_key, pair_.public_key);
  EXPECT_EQ(entry->claims, Claims());

  // Marked claims in the entry come back: the second check was a hit.
  auto marked = std::make_shared<VerifiedTokens::Entry>(*entry);
  marked->claims["marked"] = true;
  remembered.Remember(marked);
  absl::StatusOr<VerifiedJws> hit = VerifyJwsRemembering(token, Lookup(), remembered);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->claims.value("marked", false), true);

  // The kid now names another key: the entry is passed over and the token
  // checked afresh, which fails; the failure is not remembered.
  jwks_ = Jwks();
  jwks_.Add(Jwk{"k1", GenerateEd25519KeyPair().public_key});
  ExpectError(VerifyJwsRemembering(token, Lookup(), remembered).status(), "TOKEN_SIGNATURE_INVALID",
              401, token);
  EXPECT_EQ(remembered.Find(digest), marked);

  // The original key back: the entry is used again.
  jwks_ = Jwks();
  jwks_.Add(Jwk{"k1", pair_.public_key});
  hit = VerifyJwsRemembering(token, Lookup(), remembered);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->claims.value("marked", false), true);
}

TEST_F(JwsTest, OnlyTokensThatVerifyAreRemembered) {
  using jws_internal::VerifyJwsRemembering;
  VerifiedTokens remembered;
  const std::string forged = SignJws(Claims(), "k1", GenerateEd25519KeyPair().secret_key);
  for (int presented = 0; presented < 2; ++presented) {
    ExpectError(VerifyJwsRemembering(forged, Lookup(), remembered).status(),
                "TOKEN_SIGNATURE_INVALID", 401, forged);
  }
  EXPECT_EQ(remembered.Find(VerifiedTokens::DigestOf(forged)), nullptr);
  const std::string unknown = SignJws(Claims(), "k9", pair_.secret_key);
  ExpectError(VerifyJwsRemembering(unknown, Lookup(), remembered).status(), "TOKEN_KEY_UNKNOWN",
              401, unknown);
  EXPECT_EQ(remembered.Find(VerifiedTokens::DigestOf(unknown)), nullptr);
}

class ClaimsTest : public ::testing::Test {
 protected:
  static json Claims() {
    return {{"aud", "runner"}, {"token_kind", "access"}, {"scope", "exec:run read"}, {"iat", kNow},
            {"nbf", kNow},     {"exp", kNow + 300}};
  }
  static ClaimRequirements Requirements() {
    ClaimRequirements r;
    r.audience = "runner";
    r.token_kind = "access";
    r.required_scopes = {"exec:run"};
    r.now_unix = kNow;
    return r;
  }
};

TEST_F(ClaimsTest, ValidClaimsPass) { EXPECT_TRUE(VerifyClaims(Claims(), Requirements()).ok()); }

TEST_F(ClaimsTest, ExpiryIsRequiredAndEnforcedWithLeeway) {
  json claims = Claims();
  claims["exp"] = kNow - 31;
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_EXPIRED", 401);
  claims["exp"] = kNow - 10;  // within the 30 s leeway
  EXPECT_TRUE(VerifyClaims(claims, Requirements()).ok());
  ClaimRequirements strict = Requirements();
  strict.leeway_secs = 0;
  claims["exp"] = kNow;  // "on or after exp" is expired
  ExpectError(VerifyClaims(claims, strict), "TOKEN_EXPIRED", 401);
  claims["exp"] = "tomorrow";
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_MALFORMED", 401);
  claims.erase("exp");
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_MALFORMED", 401);
}

TEST_F(ClaimsTest, NotBeforeAndIssuedInFutureAreNotYetValid) {
  json claims = Claims();
  claims["nbf"] = kNow + 100;
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_NOT_YET_VALID", 401);
  claims["nbf"] = kNow + 20;  // within leeway
  EXPECT_TRUE(VerifyClaims(claims, Requirements()).ok());
  claims = Claims();
  claims["iat"] = kNow + 100;
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_NOT_YET_VALID", 401);
  claims.erase("iat");
  claims.erase("nbf");  // both optional
  EXPECT_TRUE(VerifyClaims(claims, Requirements()).ok());
}

TEST_F(ClaimsTest, AudienceMismatchInStringAndArrayForms) {
  json claims = Claims();
  claims["aud"] = "control";
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_AUDIENCE_MISMATCH", 401);
  claims["aud"] = {"control", "web"};
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_AUDIENCE_MISMATCH", 401);
  claims["aud"] = json::array();
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_AUDIENCE_MISMATCH", 401);
  claims["aud"] = {"control", "runner"};
  EXPECT_TRUE(VerifyClaims(claims, Requirements()).ok());
  claims.erase("aud");
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_AUDIENCE_MISMATCH", 401);
  claims["aud"] = 7;
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_MALFORMED", 401);
  ClaimRequirements no_audience = Requirements();
  no_audience.audience = "";  // fails closed
  ExpectError(VerifyClaims(Claims(), no_audience), "TOKEN_AUDIENCE_MISMATCH", 401);
}

TEST_F(ClaimsTest, TokenKindMustMatch) {
  json claims = Claims();
  claims["token_kind"] = "delegation";
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_KIND_MISMATCH", 401);
  claims.erase("token_kind");
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_KIND_MISMATCH", 401);
}

TEST_F(ClaimsTest, MissingScopeIs403) {
  ClaimRequirements requirements = Requirements();
  requirements.required_scopes = {"exec:run", "admin"};
  ExpectError(VerifyClaims(Claims(), requirements), "TOKEN_SCOPE_MISSING", 403);
  EXPECT_TRUE(absl::IsPermissionDenied(VerifyClaims(Claims(), requirements)));
  json claims = Claims();
  claims["scope"] = "exec:runner";  // prefixes are not memberships
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_SCOPE_MISSING", 403);
  claims.erase("scope");
  ExpectError(VerifyClaims(claims, Requirements()), "TOKEN_SCOPE_MISSING", 403);
}

TEST_F(ClaimsTest, ScopesMatchInAnyOrderWithExtras) {
  json claims = Claims();
  claims["scope"] = "zeta admin  exec:run read";
  ClaimRequirements requirements = Requirements();
  requirements.required_scopes = {"read", "admin", "exec:run"};
  EXPECT_TRUE(VerifyClaims(claims, requirements).ok());
  EXPECT_EQ(ParseScopes(" b a  b c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(ParseScopes("").empty());
}

}  // namespace
}  // namespace aevatar::base
