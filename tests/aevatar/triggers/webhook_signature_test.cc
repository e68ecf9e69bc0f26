// The webhook signature: good, bad, stale, malformed; checked against an
// HMAC computed here independently of the code under test's helper.
#include "aevatar/triggers/webhook_signature.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kSecret[] = "whsec_0123456789abcdef";
constexpr int64_t kNow = 1'796'222'220;
constexpr char kBody[] = R"({"inputs":{"n":3}})";

std::string Header(int64_t t, std::string_view body, std::string_view secret = kSecret) {
  return absl::StrCat(
      "t=", t, ",v1=",
      base::HexEncode(base::HmacSha256(secret, std::to_string(t) + "." + std::string(body))));
}

absl::Status Check(const std::string& header, std::string_view body, int64_t now = kNow) {
  auto parsed = ParseWebhookSignature(header, now);
  if (!parsed.ok()) return parsed.status();
  return VerifyWebhookSignature(*parsed, kSecret, body).status();
}

TEST(WebhookSignature, HmacMatchesRfc4231TestCase2) {
  EXPECT_EQ(base::HexEncode(base::HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(WebhookSignature, GoodSignatureVerifies) {
  EXPECT_TRUE(Check(Header(kNow, kBody), kBody).ok());
  EXPECT_EQ(SignWebhook(kSecret, kNow, kBody), Header(kNow, kBody));
  // Within the window either way (clock skew), and an empty body.
  EXPECT_TRUE(Check(Header(kNow - 299, kBody), kBody).ok());
  EXPECT_TRUE(Check(Header(kNow + 299, kBody), kBody).ok());
  EXPECT_TRUE(Check(Header(kNow, ""), "").ok());
}

TEST(WebhookSignature, AnyChangeIsInvalid) {
  for (const std::string& header :
       {Header(kNow, R"({"inputs":{"n":4}})"), Header(kNow, kBody, "whsec_other"),
        Header(kNow - 1, kBody).replace(2, 10, std::to_string(kNow))}) {
    absl::Status st = Check(header, kBody);
    ASSERT_FALSE(st.ok()) << header;
    EXPECT_EQ(base::ApiCode(st), kWebhookSignatureInvalid);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnauthenticated);
  }
}

TEST(WebhookSignature, OldOrFutureTimestampIsStaleWithADistinctCode) {
  for (int64_t t : {kNow - 301, kNow + 301, int64_t{0}}) {
    absl::Status st = Check(Header(t, kBody), kBody);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(base::ApiCode(st), kWebhookSignatureStale);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnauthenticated);
  }
}

TEST(WebhookSignature, MalformedHeadersAreInvalid) {
  const std::string mac = Header(kNow, kBody).substr(Header(kNow, kBody).find("v1="));
  for (const std::string& header :
       {std::string(), std::string("garbage"), absl::StrCat("t=", kNow), mac,
        absl::StrCat("t=abc,", mac), absl::StrCat("t=", kNow, ",v1=zz"),
        absl::StrCat("t=", kNow, ",t=", kNow, ",", mac), absl::StrCat("t=-", kNow, ",", mac),
        absl::StrCat("t=0", kNow, ",", mac), absl::StrCat("t=+", kNow, ",", mac),
        absl::StrCat("t=", kNow, ",v1=", std::string(64, 'A')), std::string(2000, 'x')}) {
    auto parsed = ParseWebhookSignature(header, kNow);
    ASSERT_FALSE(parsed.ok()) << header;
    EXPECT_EQ(base::ApiCode(parsed.status()), kWebhookSignatureInvalid) << header;
  }
}

TEST(WebhookSignature, OneMatchingEntryAmongSeveralVerifies) {
  // A sender rotating secrets signs with both.
  const std::string old_mac =
      Header(kNow, kBody, "whsec_old").substr(Header(kNow, kBody).find("v1="));
  const std::string header = absl::StrCat(Header(kNow, kBody), ",", old_mac, ",v0=ignored");
  EXPECT_TRUE(Check(header, kBody).ok());
  const std::string only_old = absl::StrCat("t=", kNow, ",", old_mac);
  EXPECT_EQ(base::ApiCode(Check(only_old, kBody)), kWebhookSignatureInvalid);
}

// The replay store is keyed on the delivery key: every spelling of one
// delivery's header gives the same key, another delivery another key.
TEST(WebhookSignature, EverySpellingOfOneDeliveryHasOneKey) {
  const std::string header = Header(kNow, kBody);
  const std::string mac = header.substr(header.find("v1="));
  const std::string old_mac =
      Header(kNow, kBody, "whsec_old").substr(Header(kNow, kBody).find("v1="));
  auto key_of = [](const std::string& text) -> std::string {
    auto parsed = ParseWebhookSignature(text, kNow);
    if (!parsed.ok()) return "parse: " + std::string(parsed.status().message());
    auto key = VerifyWebhookSignature(*parsed, kSecret, kBody);
    return key.ok() ? *key : "verify: " + std::string(key.status().message());
  };
  const std::string key = key_of(header);
  EXPECT_EQ(key, absl::StrCat("t=", kNow, ",", mac));
  for (const std::string& spelling :
       {absl::StrCat(header, ",v0=x"), absl::StrCat(" ", header, " "),
        absl::StrCat(mac, ",t=", kNow), absl::StrCat(header, ",", mac),
        absl::StrCat("t=", kNow, ",", old_mac, ",", mac), absl::StrCat("t=", kNow, " , ", mac)}) {
    EXPECT_EQ(key_of(spelling), key) << spelling;
  }
  EXPECT_NE(key_of(Header(kNow + 1, kBody)), key);
}

}  // namespace
}  // namespace aevatar::orchestrator
