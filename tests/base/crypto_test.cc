#include "base/crypto.h"

#include <set>

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(Sha256, MatchesKnownVectors) {
  // FIPS 180-2 / NIST examples.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256("abc").size(), 32u);
  EXPECT_EQ(HexEncode(Sha256("abc")), Sha256Hex("abc"));
}

TEST(HexEncode, IsLowercase) { EXPECT_EQ(HexEncode(std::string("\x00\xab\xff", 3)), "00abff"); }

TEST(Base64Url, RoundTripsAllLengthsWithoutPadding) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    const std::string text = Base64UrlEncode(bytes);
    EXPECT_EQ(text.find_first_of("=+/"), std::string::npos);
    absl::StatusOr<std::string> back = Base64UrlDecode(text);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, bytes);
    bytes.push_back(static_cast<char>(i * 37 + 11));
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

TEST(Base64Url, RejectsPaddingStandardAlphabetAndJunk) {
  EXPECT_TRUE(Base64UrlDecode("QQ").ok());
  EXPECT_FALSE(Base64UrlDecode("QQ==").ok());
  EXPECT_FALSE(Base64UrlDecode("QQ=").ok());
  EXPECT_FALSE(Base64UrlDecode("+_8").ok());
  EXPECT_FALSE(Base64UrlDecode("-/8").ok());
  EXPECT_FALSE(Base64UrlDecode("QU JD").ok());
  EXPECT_FALSE(Base64UrlDecode("QUJD\n").ok());
  EXPECT_FALSE(Base64UrlDecode(std::string("QU\0D", 4)).ok());
  // A lone trailing character carries no whole byte.
  EXPECT_FALSE(Base64UrlDecode("QUJDR").ok());
  // Non-zero unused bits would give a second spelling of the same bytes.
  EXPECT_FALSE(Base64UrlDecode("QR").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(Base64UrlDecode("a=").status()));
}

TEST(RandomId, HasPrefixAnd26Base32CharsAndIsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = RandomId("op_");
    ASSERT_EQ(id.size(), 3u + 26u);
    EXPECT_EQ(id.substr(0, 3), "op_");
    EXPECT_EQ(id.find_first_not_of("abcdefghijklmnopqrstuvwxyz234567", 3), std::string::npos);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(RandomId("").size(), 26u);
}

TEST(RandomBytes, HasRequestedLengthAndVaries) {
  EXPECT_EQ(RandomBytes(0).size(), 0u);
  EXPECT_EQ(RandomBytes(32).size(), 32u);
  EXPECT_NE(RandomBytes(32), RandomBytes(32));
}

TEST(ConstantTimeEquals, ComparesContentAndLength) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
}

TEST(Ed25519, SignsAndVerifies) {
  const Ed25519KeyPair pair = GenerateEd25519KeyPair();
  ASSERT_EQ(pair.public_key.size(), 32u);
  ASSERT_EQ(pair.secret_key.size(), 64u);
  const std::string signature = Ed25519Sign(pair.secret_key, "message");
  ASSERT_EQ(signature.size(), 64u);
  EXPECT_TRUE(Ed25519Verify(pair.public_key, "message", signature));
  EXPECT_FALSE(Ed25519Verify(pair.public_key, "messagE", signature));
  std::string flipped = signature;
  flipped[10] ^= 1;
  EXPECT_FALSE(Ed25519Verify(pair.public_key, "message", flipped));
  EXPECT_FALSE(Ed25519Verify(GenerateEd25519KeyPair().public_key, "message", signature));
  // Wrong sizes are a plain "no", never a read past the buffer.
  EXPECT_FALSE(Ed25519Verify(pair.public_key.substr(1), "message", signature));
  EXPECT_FALSE(Ed25519Verify(pair.public_key, "message", signature.substr(1)));
}

TEST(Ed25519, MatchesRfc8032TestVector1) {
  const std::string seed_hex = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
  const std::string public_hex = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  auto unhex = [](const std::string& hex) {
    std::string out;
    for (size_t i = 0; i < hex.size(); i += 2) {
      out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
  };
  const std::string secret = unhex(seed_hex) + unhex(public_hex);
  EXPECT_EQ(HexEncode(Ed25519Sign(secret, "")),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
}

TEST(SecretBox, RoundTrips) {
  const std::string key = RandomBytes(32);
  for (const std::string& plaintext :
       {std::string(), std::string("hello"), std::string(5000, 'x')}) {
    const std::string sealed = SecretBoxSeal(key, plaintext);
    EXPECT_EQ(sealed.size(), plaintext.size() + 24 + 16);
    absl::StatusOr<std::string> opened = SecretBoxOpen(key, sealed);
    ASSERT_TRUE(opened.ok()) << opened.status();
    EXPECT_EQ(*opened, plaintext);
  }
  // Random nonces: sealing twice never gives the same bytes.
  EXPECT_NE(SecretBoxSeal(key, "same"), SecretBoxSeal(key, "same"));
}

TEST(SecretBox, TamperingIsDataLoss) {
  const std::string key = RandomBytes(32);
  const std::string sealed = SecretBoxSeal(key, "attack at dawn");
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string tampered = sealed;
    tampered[i] ^= 0x01;
    EXPECT_TRUE(absl::IsDataLoss(SecretBoxOpen(key, tampered).status())) << "byte " << i;
  }
  EXPECT_TRUE(absl::IsDataLoss(SecretBoxOpen(key, sealed.substr(0, 39)).status()));
  EXPECT_TRUE(absl::IsDataLoss(SecretBoxOpen(key, sealed + "x").status()));
}

TEST(SecretBox, WrongKeyFails) {
  const std::string sealed = SecretBoxSeal(RandomBytes(32), "attack at dawn");
  EXPECT_TRUE(absl::IsDataLoss(SecretBoxOpen(RandomBytes(32), sealed).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(SecretBoxOpen(RandomBytes(16), sealed).status()));
}

TEST(Password, HashVerifiesOnlyTheRightPassword) {
  absl::StatusOr<std::string> hash = HashPassword("correct horse battery staple");
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_EQ(hash->rfind("$argon2id$", 0), 0u);
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse battery staple"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse battery stapl"));
  EXPECT_FALSE(VerifyPassword(*hash, ""));
  EXPECT_FALSE(VerifyPassword("", "correct horse battery staple"));
  EXPECT_FALSE(VerifyPassword("not a hash", "correct horse battery staple"));
  // Salted: the same password hashes differently each time.
  absl::StatusOr<std::string> again = HashPassword("correct horse battery staple");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*hash, *again);
}

}  // namespace
}  // namespace aevatar::base
