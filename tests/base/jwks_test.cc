#include <atomic>
#include <thread>

#include "base/api_error.h"
#include "base/crypto.h"
#include "base/jws.h"
#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

using nlohmann::json;

TEST(Jwks, RoundTripsThroughJson) {
  Jwks jwks;
  const Ed25519KeyPair a = GenerateEd25519KeyPair();
  const Ed25519KeyPair b = GenerateEd25519KeyPair();
  jwks.Add(Jwk{"a", a.public_key});
  jwks.Add(Jwk{"b", b.public_key});
  const json doc = json::parse(jwks.ToJson());
  EXPECT_EQ(doc["keys"][0]["kty"], "OKP");
  EXPECT_EQ(doc["keys"][0]["crv"], "Ed25519");
  EXPECT_EQ(doc["keys"][0]["alg"], "EdDSA");
  EXPECT_FALSE(doc["keys"][0].contains("d"));
  absl::StatusOr<Jwks> parsed = Jwks::Parse(jwks.ToJson());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_NE(parsed->Find("a"), nullptr);
  EXPECT_EQ(parsed->Find("a")->public_key, a.public_key);
  EXPECT_EQ(parsed->Find("b")->public_key, b.public_key);
  EXPECT_EQ(parsed->Find("c"), nullptr);
  EXPECT_EQ(parsed->ToJson(), jwks.ToJson());
}

TEST(Jwks, SkipsKeysThatAreNotEd25519Signing) {
  const std::string x = Base64UrlEncode(GenerateEd25519KeyPair().public_key);
  const json doc = {
      {"keys",
       {{{"kty", "RSA"}, {"kid", "rsa"}, {"n", "AQAB"}, {"e", "AQAB"}},
        {{"kty", "EC"}, {"crv", "P-256"}, {"kid", "ec"}, {"x", "AA"}, {"y", "AA"}},
        {{"kty", "OKP"}, {"crv", "X25519"}, {"kid", "x25519"}, {"x", x}},
        {{"kty", "OKP"}, {"crv", "Ed25519"}, {"kid", "enc"}, {"x", x}, {"use", "enc"}},
        {{"kty", "OKP"}, {"crv", "Ed25519"}, {"kid", "ok"}, {"x", x}}}}};
  absl::StatusOr<Jwks> parsed = Jwks::Parse(doc.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_NE(parsed->Find("ok"), nullptr);
  for (const char* kid : {"rsa", "ec", "x25519", "enc"}) EXPECT_EQ(parsed->Find(kid), nullptr);
  EXPECT_TRUE(Jwks::Parse(R"({"keys":[]})")->empty());
}

TEST(Jwks, MalformedDocumentsAreInvalidArgument) {
  const std::string x = Base64UrlEncode(GenerateEd25519KeyPair().public_key);
  const json ed = {{"kty", "OKP"}, {"crv", "Ed25519"}, {"kid", "k"}, {"x", x}};
  json short_x = ed, no_kid = ed, with_d = ed;
  short_x["x"] = Base64UrlEncode("short");
  no_kid.erase("kid");
  with_d["d"] = x;
  for (const std::string& text :
       {std::string("not json"), std::string("[]"), std::string("{}"),
        std::string(R"({"keys":{}})"), std::string(R"({"keys":[1]})"),
        json{{"keys", {short_x}}}.dump(), json{{"keys", {no_kid}}}.dump(),
        json{{"keys", {with_d}}}.dump(), json{{"keys", {ed, ed}}}.dump()}) {
    EXPECT_TRUE(absl::IsInvalidArgument(Jwks::Parse(text).status())) << text;
  }
}

// A JWKS source whose document and health the test controls.
class FakeSource {
 public:
  JwksCache::Fetcher Fetcher() {
    return [this]() -> absl::StatusOr<std::string> {
      ++calls;
      if (!healthy) return absl::UnavailableError("jwks source down");
      return jwks.ToJson();
    };
  }
  Jwks jwks;
  bool healthy = true;
  std::atomic<int> calls = 0;
};

Jwk NewKey(const std::string& kid) { return Jwk{kid, GenerateEd25519KeyPair().public_key}; }

TEST(JwksCache, FetchesLazilyOnceAndServesKnownKidsFromCache) {
  FakeSource source;
  source.jwks.Add(NewKey("k1"));
  JwksCache cache(source.Fetcher(), 3600);
  EXPECT_EQ(source.calls, 0);
  ASSERT_TRUE(cache.Lookup("k1").ok());
  ASSERT_TRUE(cache.Lookup("k1").ok());
  EXPECT_EQ(cache.Lookup("k1")->public_key, source.jwks.Find("k1")->public_key);
  EXPECT_EQ(source.calls, 1);
}

TEST(JwksCache, RefreshesOnUnknownKid) {
  FakeSource source;
  source.jwks.Add(NewKey("k1"));
  JwksCache cache(source.Fetcher(), 0);
  ASSERT_TRUE(cache.Lookup("k1").ok());
  source.jwks.Add(NewKey("k2"));  // key rotation at the issuer
  absl::StatusOr<Jwk> rotated = cache.Lookup("k2");
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->public_key, source.jwks.Find("k2")->public_key);
  EXPECT_EQ(source.calls, 2);
  const absl::Status unknown = cache.Lookup("k9").status();
  EXPECT_EQ(ApiCode(unknown), "TOKEN_KEY_UNKNOWN");
  EXPECT_EQ(HttpStatusFor(unknown), 401);
  EXPECT_EQ(source.calls, 3);
}

TEST(JwksCache, ForgedKidsCannotHammerTheSource) {
  FakeSource source;
  source.jwks.Add(NewKey("k1"));
  JwksCache cache(source.Fetcher(), 3600);
  ASSERT_TRUE(cache.Lookup("k1").ok());
  source.jwks.Add(NewKey("k2"));
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(ApiCode(cache.Lookup("forged_" + std::to_string(i)).status()), "TOKEN_KEY_UNKNOWN");
  }
  // Within the interval even a genuinely new kid waits for the next window.
  EXPECT_EQ(ApiCode(cache.Lookup("k2").status()), "TOKEN_KEY_UNKNOWN");
  EXPECT_EQ(source.calls, 1);
}

TEST(JwksCache, KeepsLastGoodJwksWhenRefreshFails) {
  FakeSource source;
  source.jwks.Add(NewKey("k1"));
  JwksCache cache(source.Fetcher(), 0);
  ASSERT_TRUE(cache.Lookup("k1").ok());
  source.healthy = false;
  EXPECT_EQ(ApiCode(cache.Lookup("k2").status()), "TOKEN_KEY_UNKNOWN");
  EXPECT_TRUE(cache.Lookup("k1").ok());
  EXPECT_EQ(source.calls, 2);
}

TEST(JwksCache, UnparseableRefreshKeepsLastGoodJwks) {
  std::atomic<int> calls = 0;
  const std::string good = [] {
    Jwks jwks;
    jwks.Add(NewKey("k1"));
    return jwks.ToJson();
  }();
  JwksCache cache(
      [&]() -> absl::StatusOr<std::string> { return ++calls == 1 ? good : "{not json"; }, 0);
  ASSERT_TRUE(cache.Lookup("k1").ok());
  EXPECT_EQ(ApiCode(cache.Lookup("k2").status()), "TOKEN_KEY_UNKNOWN");
  EXPECT_TRUE(cache.Lookup("k1").ok());
  EXPECT_EQ(calls, 2);
}

TEST(JwksCache, NeverLoadedSourceIsUnavailable) {
  FakeSource source;
  source.healthy = false;
  JwksCache cache(source.Fetcher(), 3600);
  const absl::Status status = cache.Lookup("k1").status();
  EXPECT_EQ(ApiCode(status), "JWKS_UNAVAILABLE");
  EXPECT_EQ(HttpStatusFor(status), 503);
  EXPECT_FALSE(cache.Lookup("k1").ok());
  EXPECT_EQ(source.calls, 1);  // failed attempts are rate-limited too
}

TEST(JwksCache, ConcurrentLookupsShareOneFetch) {
  FakeSource source;
  source.jwks.Add(NewKey("k1"));
  JwksCache cache(source.Fetcher(), 3600);
  std::atomic<int> ok = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) ok += cache.Lookup("k1").ok() ? 1 : 0;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok, 800);
  EXPECT_EQ(source.calls, 1);
}

TEST(JwksCache, BacksTokenVerification) {
  const Ed25519KeyPair pair = GenerateEd25519KeyPair();
  FakeSource source;
  JwksCache cache(source.Fetcher(), 0);
  const std::string token = SignJws({{"exp", 1}}, "fresh", pair.secret_key);
  EXPECT_EQ(ApiCode(VerifyJws(token, cache.AsLookup()).status()), "TOKEN_KEY_UNKNOWN");
  source.jwks.Add(Jwk{"fresh", pair.public_key});
  absl::StatusOr<VerifiedJws> verified = VerifyJws(token, cache.AsLookup());
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->claims["exp"], 1);
}

}  // namespace
}  // namespace aevatar::base
