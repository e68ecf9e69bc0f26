#include "base/verified_signatures.h"

#include <string>

#include "base/crypto.h"
#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

TEST(VerifiedSignatures, AHitNeedsTheSameKeyMessageAndSignature) {
  VerifiedSignatures remembered;
  const Ed25519KeyPair pair = GenerateEd25519KeyPair();
  const std::string signature = Ed25519Sign(pair.secret_key, "message");
  EXPECT_FALSE(remembered.Contains(pair.public_key, "message", signature));
  remembered.Remember(pair.public_key, "message", signature);
  EXPECT_TRUE(remembered.Contains(pair.public_key, "message", signature));

  EXPECT_FALSE(remembered.Contains(pair.public_key, "messagE", signature));
  EXPECT_FALSE(remembered.Contains(GenerateEd25519KeyPair().public_key, "message", signature));
  std::string flipped = signature;
  flipped[0] ^= 0x01;
  EXPECT_FALSE(remembered.Contains(pair.public_key, "message", flipped));
  // The same bytes split differently between the parts are another triple.
  EXPECT_FALSE(remembered.Contains(pair.public_key + signature.substr(0, 1), "message",
                                   signature.substr(1)));
}

TEST(VerifiedSignatures, OnlySignaturesThatVerifyAreRemembered) {
  const Ed25519KeyPair pair = GenerateEd25519KeyPair();
  const std::string signature = Ed25519Sign(pair.secret_key, "message");
  const std::string forged = Ed25519Sign(GenerateEd25519KeyPair().secret_key, "message");
  EXPECT_FALSE(Ed25519VerifyRemembered(pair.public_key, "message", forged));
  EXPECT_FALSE(Ed25519VerifyRemembered(pair.public_key, "message", forged));
  EXPECT_TRUE(Ed25519VerifyRemembered(pair.public_key, "message", signature));
  EXPECT_TRUE(Ed25519VerifyRemembered(pair.public_key, "message", signature));
  EXPECT_FALSE(Ed25519VerifyRemembered(pair.public_key, "other message", signature));
}

}  // namespace
}  // namespace aevatar::base
